// ssx's dispersal controller (drivers/ground/src/behaviour.rs, `disperse`) as an ARGoS 3 foot-bot
// controller, for the side-by-side benchmark (run.sh). Same gains and thresholds as ssx's
// defaults; the foot-bot's proximity ring is patched to 12 rays of 2 m from the heading
// (footbot-ring.patch), so the two controllers read the same ring.
#include <argos3/core/control_interface/ci_controller.h>
#include <argos3/plugins/robots/generic/control_interface/ci_differential_steering_actuator.h>
#include <argos3/plugins/robots/foot-bot/control_interface/ci_footbot_proximity_sensor.h>

#include <cmath>
#include <vector>

using namespace argos;

class CDispersal : public CCI_Controller {
public:
   void Init(TConfigurationNode&) override {
      m_pcWheels = GetActuator<CCI_DifferentialSteeringActuator>("differential_steering");
      m_pcProximity = GetSensor<CCI_FootBotProximitySensor>("footbot_proximity");
   }

   void ControlStep() override {
      const auto& readings = m_pcProximity->GetReadings();
      const size_t n = readings.size();
      // A reading is 0.0100527 / (distance + 0.000163144), at most 1, within range and 0 beyond
      // it (footbot_proximity_default_sensor.cpp): turned back into a distance.
      m_ranges.resize(n);
      for(size_t i = 0; i < n; ++i) {
         const double v = readings[i].Value;
         m_ranges[i] = v > 0.0 ? std::min(0.0100527 / v - 0.000163144, MAX_RANGE) : MAX_RANGE;
      }
      double linear = 0.0, angular = 0.0;
      bool anything = false;
      for(double r : m_ranges) anything |= r < MAX_RANGE;
      if(anything) {
         double x = 0.0, y = 0.0;
         bool free = true;
         for(size_t i = 0; i < n; ++i) {
            const double a = readings[i].Angle.GetValue();
            x += m_ranges[i] * std::cos(a);
            y += m_ranges[i] * std::sin(a);
            if(std::fabs(std::remainder(a, 2.0 * M_PI)) <= M_PI / 4.0 + 1e-9 && m_ranges[i] <= FREE_AHEAD) free = false;
         }
         const double error = std::atan2(y, x);
         if(std::fabs(error) < TOLERANCE && free) {
            linear = SPEED;
            angular = TURN_GAIN * error;
         } else {
            angular = TURN_GAIN * (error == 0.0 ? 0.3 : std::copysign(std::max(std::fabs(error), 0.3), error));
         }
      }
      // Body command to wheel speeds (cm/s): the foot-bot's wheels are 0.14 m apart.
      const double half = 0.07;
      m_pcWheels->SetLinearVelocity(100.0 * (linear - angular * half), 100.0 * (linear + angular * half));
   }

private:
   static constexpr double MAX_RANGE = 2.0, SPEED = 0.4, TURN_GAIN = 2.0, TOLERANCE = 0.5, FREE_AHEAD = 0.5;
   CCI_DifferentialSteeringActuator* m_pcWheels = nullptr;
   CCI_FootBotProximitySensor* m_pcProximity = nullptr;
   std::vector<double> m_ranges;
};

REGISTER_CONTROLLER(CDispersal, "ssx_dispersal_controller")
