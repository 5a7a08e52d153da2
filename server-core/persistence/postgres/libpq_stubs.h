// libpq, opened at the first PostgreSQL connection (lib/common/lazy_library.h): the stubs of
// libpq_stubs.cc define the libpq functions the backend calls and forward to the real ones.
#pragma once

#include "lib/common/lazy_library.h"

namespace tock::persistence {

LazyLibrary& Libpq();

}  // namespace tock::persistence
