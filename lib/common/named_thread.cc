#include "lib/common/named_thread.h"

#include <pthread.h>

#include <cstring>
#include <string>

namespace tock {

std::thread NamedThread(const char* name, std::function<void()> body) {
  return std::thread([name = std::string(name, strnlen(name, 15)), body = std::move(body)] {
    pthread_setname_np(pthread_self(), name.c_str());
    body();
  });
}

}  // namespace tock
