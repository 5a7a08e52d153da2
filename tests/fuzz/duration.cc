// Human durations of the CLI and the configuration (lib/common/duration.h): any text is
// parsed or refused with INVALID_ARGUMENT; what is parsed is written back by
// FormatHumanDuration in a form that parses to the same value.
#include "lib/common/duration.h"

#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tock::fuzz::AsText(data, size);
  for (const auto bare :
       {tock::BareNumberUnit::kNone, tock::BareNumberUnit::kDays, tock::BareNumberUnit::kSeconds}) {
    auto parsed = tock::ParseHumanDuration(absl::string_view(text.data(), text.size()), bare);
    if (!parsed.ok()) {
      FUZZ_CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument,
                 parsed.status().ToString());
      continue;
    }
    const std::string formatted = tock::FormatHumanDuration(*parsed);
    // Whole milliseconds (all that the parser can produce) come back the same.
    if (*parsed == absl::InfiniteDuration() || *parsed == -absl::InfiniteDuration()) continue;
    if (*parsed % absl::Milliseconds(1) != absl::ZeroDuration()) continue;
    auto again = tock::ParseHumanDuration(formatted);
    FUZZ_CHECK(again.ok(),
               std::string(text) + " -> " + formatted + ": " + again.status().ToString());
    FUZZ_CHECK(*again == *parsed, std::string(text) + " -> " + formatted);
  }
  return 0;
}
