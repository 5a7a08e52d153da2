#include "lib/common/clock.h"

namespace tock {
namespace {

class SystemClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

Clock& RealClock() {
  static SystemClock* clock = new SystemClock();
  return *clock;
}

}  // namespace tock
