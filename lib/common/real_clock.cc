#include "lib/common/clock.h"

#include "absl/time/clock.h"

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
