// SigV4 against the worked examples in AWS's S3 documentation ("Examples: Signature
// Calculations in AWS Signature Version 4"), which every S3 server reproduces.
#include "lib/archival/sigv4.h"

#include <gtest/gtest.h>

#include "lib/archival/s3_xml.h"

namespace tock::archival {
namespace {

const AwsCredentials kExampleCredentials{"AKIAIOSFODNN7EXAMPLE",
                                         "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
const char kEmptySha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

absl::Time ExampleTime() { return absl::FromCivil(absl::CivilSecond(2013, 5, 24), absl::UTCTimeZone()); }

TEST(SigV4, AwsGetObjectExample) {
  SigV4Request r;
  r.method = "GET";
  r.encoded_path = "/test.txt";
  r.headers = {{"host", "examplebucket.s3.amazonaws.com"},
               {"range", "bytes=0-9"},
               {"x-amz-content-sha256", kEmptySha256},
               {"x-amz-date", "20130524T000000Z"}};
  r.payload_sha256_hex = kEmptySha256;
  EXPECT_EQ(SignV4(r, kExampleCredentials, "us-east-1", "s3", ExampleTime()),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4, AwsListObjectsExampleSortsAndEncodesTheQuery) {
  SigV4Request r;
  r.method = "GET";
  r.encoded_path = "/";
  r.query = {{"prefix", "J"}, {"max-keys", "2"}};  // out of order on purpose
  r.headers = {{"host", "examplebucket.s3.amazonaws.com"},
               {"x-amz-content-sha256", kEmptySha256},
               {"x-amz-date", "20130524T000000Z"}};
  r.payload_sha256_hex = kEmptySha256;
  EXPECT_EQ(SignV4(r, kExampleCredentials, "us-east-1", "s3", ExampleTime()),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
            "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4, AwsPutObjectExampleHashesThePayload) {
  const std::string body = "Welcome to Amazon S3.";
  const std::string hash = Sha256Hex(body);
  EXPECT_EQ(hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigV4Request r;
  r.method = "PUT";
  r.encoded_path = "/test%24file.text";
  r.headers = {{"date", "Fri, 24 May 2013 00:00:00 GMT"},
               {"host", "examplebucket.s3.amazonaws.com"},
               {"x-amz-content-sha256", hash},
               {"x-amz-date", "20130524T000000Z"},
               {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
  r.payload_sha256_hex = hash;
  EXPECT_EQ(SignV4(r, kExampleCredentials, "us-east-1", "s3", ExampleTime()),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
            "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4, UriEncodingKeepsUnreservedAndPathSlashes) {
  EXPECT_EQ(UriEncode("a b/c:d~e_f.g-h"), "a%20b%2Fc%3Ad~e_f.g-h");
  EXPECT_EQ(UriEncodePath("ns/visibility/2026-01-02T03:04:05Z/r"),
            "ns/visibility/2026-01-02T03%3A04%3A05Z/r");
  EXPECT_EQ(UriEncode("\xc3\xa9"), "%C3%A9");
  EXPECT_EQ(AmzDate(ExampleTime()), "20130524T000000Z");
}

TEST(S3Xml, ReadsKeysTokensAndErrorsWithEntitiesDecoded) {
  const std::string list =
      "<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a&amp;b</Key></Contents>"
      "<Contents><Key>c&lt;d&#x41;&#66;</Key></Contents>"
      "<NextContinuationToken>tok/1=</NextContinuationToken></ListBucketResult>";
  EXPECT_EQ(XmlElements(list, "Key"), (std::vector<std::string>{"a&b", "c<dAB"}));
  EXPECT_EQ(XmlElement(list, "NextContinuationToken"), "tok/1=");
  EXPECT_EQ(XmlElement(list, "Missing"), "");
}

}  // namespace
}  // namespace tock::archival
