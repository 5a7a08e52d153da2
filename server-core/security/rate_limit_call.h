// What the rate limits need to know of a call before it is dispatched, read from the request
// as it arrived (a serialized payload): its namespace, and for GetWorkflowExecutionHistory
// whether it waits for new events (then it is a long poll, like Temporal's
// PollWorkflowExecutionHistory).
//
// Only the top level of the message is walked, skipping every other field by its length
// (nothing is parsed or copied but the namespace, into a buffer the caller reuses): a large
// request such as a workflow task's completion costs no more than a small one.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <string>

namespace tock::server::security {

struct CallFields {
  int namespace_field = 0;  // the request's `namespace` field number; 0: none
  int wait_field = 0;       // a bool field that makes the call a long poll; 0: none
};

// Reads `fields` of `payload` into `*namespace_name` ("" when absent, unreadable or longer
// than a namespace name can be) and `*waits`. A payload that is not a message gives "" and
// false: the handler refuses it, and the host's limit still counts it.
void ReadCallFields(const grpc::ByteBuffer& payload, const CallFields& fields,
                    std::string* namespace_name, bool* waits);

}  // namespace tock::server::security
