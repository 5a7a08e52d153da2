#include "server-core/security/rate_limit_call.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include "lib/common/status.h"

namespace tock::server::security {

void ReadCallFields(const grpc::ByteBuffer& payload, const CallFields& fields,
                    std::string* namespace_name, bool* waits) {
  using google::protobuf::internal::WireFormatLite;
  namespace_name->clear();
  *waits = false;
  if (fields.namespace_field == 0 && fields.wait_field == 0) return;
  // The reader only reads the buffer's slices; it takes a non-const pointer for gRPC's C API.
  grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer*>(&payload));
  if (!reader.status().ok()) return;
  google::protobuf::io::CodedInputStream in(&reader);
  // The server accepts requests up to 128 MiB (server.cc); the stream's default limit is
  // lower (and a field skipped past it would stop the walk early).
  in.SetTotalBytesLimit(256 * 1024 * 1024);
  bool too_long = false;
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    const int number = static_cast<int>(WireFormatLite::GetTagFieldNumber(tag));
    const auto type = WireFormatLite::GetTagWireType(tag);
    if (number == fields.namespace_field && type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) break;
      // The last occurrence counts, as when the message is parsed.
      too_long = length > kMaxNamespaceNameLength;
      if (too_long) {
        namespace_name->clear();
        if (!in.Skip(static_cast<int>(length))) break;
      } else if (!in.ReadString(namespace_name, static_cast<int>(length))) {
        namespace_name->clear();
        break;
      }
      continue;
    }
    if (number == fields.wait_field && type == WireFormatLite::WIRETYPE_VARINT) {
      uint64_t value = 0;
      if (!in.ReadVarint64(&value)) break;
      *waits = value != 0;
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) break;
  }
}

}  // namespace tock::server::security
