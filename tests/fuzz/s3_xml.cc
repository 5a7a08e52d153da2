// S3's XML answers (lib/archival/s3_xml.h), as a server or anything in between could send
// them: elements are found and entities decoded without reading past the input, and the
// decoded text is never longer than the document.
#include "lib/archival/s3_xml.h"

#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string xml(tock::fuzz::AsText(data, size));  // own buffer: ASan sees overreads
  for (const char* tag :
       {"Key", "Contents", "NextContinuationToken", "IsTruncated", "Code", "Message", ""}) {
    const std::vector<std::string> all = tock::archival::XmlElements(xml, tag);
    size_t total = 0;
    for (const std::string& text : all) total += text.size();
    FUZZ_CHECK(total <= xml.size(), xml);
    const std::string first = tock::archival::XmlElement(xml, tag);
    FUZZ_CHECK(all.empty() ? first.empty() : first == all.front(), xml);
  }
  return 0;
}
