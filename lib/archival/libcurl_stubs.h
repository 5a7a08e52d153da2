// libcurl, opened when the first S3 store or timer callback sender is made
// (lib/common/lazy_library.h): the stubs of libcurl_stubs.cc define the libcurl functions
// they call (easy and multi interfaces) and forward to the real ones.
#pragma once

#include "lib/common/lazy_library.h"

namespace tock::archival {

LazyLibrary& Libcurl();

}  // namespace tock::archival
