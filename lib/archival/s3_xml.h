// The few values Tock reads from S3's XML answers (ListObjectsV2 and error bodies). S3's XML
// is flat and generated, so picking elements by name is enough; entities are decoded.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tock::archival {

// The text of every <tag>...</tag> element, in document order, entities decoded.
std::vector<std::string> XmlElements(std::string_view xml, std::string_view tag);
// The first one, or "".
std::string XmlElement(std::string_view xml, std::string_view tag);

}  // namespace tock::archival
