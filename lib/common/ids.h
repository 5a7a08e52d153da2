// Identifiers: random version-4 UUIDs (namespace ids, run ids, request ids).
#pragma once

#include <string>

namespace tock {

// A new random UUID in canonical lower-case form. Thread-safe.
std::string NewUuid();

// True for the canonical 8-4-4-4-12 hex form.
bool IsUuid(const std::string& text);

}  // namespace tock
