// Archives in a directory (FileBlobStore + Temporal's filestore layout): written, listed and
// read back, and the exact file names Temporal's archiver uses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "lib/archival/archival_uri.h"
#include "lib/archival/file_blob_store.h"
#include "lib/archival/history_archive.h"
#include "lib/archival/visibility_archive.h"
#include "lib/common/hashing.h"
#include "lib/common/time_format.h"

namespace tock::archival {
namespace {
namespace fs = std::filesystem;
namespace hist = temporal::api::history::v1;

class ArchiveFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tock-archive-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    uri_ = *ParseArchivalUri("file://" + dir_.string());
    store_ = std::make_unique<FileBlobStore>(dir_.string(), 0640, 0750);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::vector<hist::HistoryEvent> Events(int n, int64_t version) {
    std::vector<hist::HistoryEvent> out(n);
    for (int i = 0; i < n; ++i) {
      out[i].set_event_id(i + 1);
      out[i].set_version(version);
      out[i].set_event_type(i == 0 ? temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
                                   : temporal::api::enums::v1::EVENT_TYPE_TIMER_STARTED);
    }
    return out;
  }

  fs::path dir_;
  ArchivalUri uri_;
  std::unique_ptr<FileBlobStore> store_;
};

TEST(ArchivalUri, ParsesFileAndS3AndRefusesTheRest) {
  auto f = ParseArchivalUri("file:///var/archive/");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->scheme, "file");
  EXPECT_EQ(f->path, "/var/archive");
  auto s = ParseArchivalUri("s3://bucket/some/prefix/");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->bucket, "bucket");
  EXPECT_EQ(s->path, "some/prefix");
  EXPECT_EQ(ParseArchivalUri("gs://b").status().message(),
            "invalid archival URI \"gs://b\": unknown archiver scheme \"gs\"; use file:///DIR or "
            "s3://BUCKET[/PREFIX]");
  EXPECT_EQ(ParseArchivalUri("s3://").status().message(),
            "invalid archival URI \"s3://\": the bucket is empty; use s3://BUCKET[/PREFIX]");
  EXPECT_FALSE(ParseArchivalUri("file://").ok());
  EXPECT_FALSE(ParseArchivalUri("file://host/dir").ok());
  EXPECT_FALSE(ParseArchivalUri("/no/scheme").ok());
}

TEST_F(ArchiveFileTest, HistoryUsesTemporalsFileNameAndReadsBack) {
  HistoryArchive archive(uri_, *store_);
  ArchivedRun run{"ns-id", "ns", "wf-1", "run-1"};
  ASSERT_TRUE(archive.Archive(run, Events(5, 7)).ok());
  const std::string name = std::to_string(Fingerprint64("ns-id")) +
                           std::to_string(Fingerprint64("wf-1")) +
                           std::to_string(Fingerprint64("run-1")) + "_7.history";
  ASSERT_TRUE(fs::exists(dir_ / name)) << name;
  EXPECT_EQ(fs::status(dir_ / name).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  std::ifstream in(dir_ / name);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text.rfind("[{\"events\":[{\"eventId\":\"1\"", 0), 0u) << text.substr(0, 80);

  auto got = archive.Get("ns-id", "wf-1", "run-1");  // highest version
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->events_size(), 5);
  EXPECT_EQ(got->events(4).event_id(), 5);
  EXPECT_EQ(archive.Get("ns-id", "wf-1", "run-2").status().message(),
            "requested workflow history does not exist");
  EXPECT_EQ(archive.Get("ns-id", "wf-1", "run-1", 3).status().code(), absl::StatusCode::kNotFound);
  // Archiving again (a retry after a crash) rewrites the same file.
  ASSERT_TRUE(archive.Archive(run, Events(5, 7)).ok());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// Found by fuzzing (archive_readers): a history whose first event serializes to nothing (an
// empty event) was archived by writing into a batch that did not exist yet.
TEST_F(ArchiveFileTest, AHistoryStartingWithAnEmptyEventIsArchived) {
  HistoryArchive archive(uri_, *store_);
  std::vector<hist::HistoryEvent> events(1);  // every field default: 0 bytes
  for (const hist::HistoryEvent& e : Events(2, 0)) events.push_back(e);
  ASSERT_EQ(events[0].ByteSizeLong(), 0u);
  ASSERT_TRUE(archive.Archive({"n", "ns", "w", "r"}, events).ok());
  auto got = archive.Get("n", "w", "r");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->events_size(), 3);
}

TEST_F(ArchiveFileTest, ReadsAHistoryFileOfSeveralBatchesWithUnknownFields) {
  // As another archiver might write it: two History objects, a field Tock does not know.
  const std::string name = std::to_string(Fingerprint64("n")) + std::to_string(Fingerprint64("w")) +
                           std::to_string(Fingerprint64("r")) + "_0.history";
  fs::create_directories(dir_);
  std::ofstream(dir_ / name)
      << R"([{"events":[{"eventId":"1","eventType":"EVENT_TYPE_WORKFLOW_EXECUTION_STARTED","futureField":1}]},)"
      << R"({"events":[{"eventId":"2","eventType":"EVENT_TYPE_WORKFLOW_TASK_SCHEDULED"}]}])";
  auto got = HistoryArchive(uri_, *store_).Get("n", "w", "r");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->events_size(), 2);
  EXPECT_EQ(got->events(1).event_type(), temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
}

TEST_F(ArchiveFileTest, VisibilityRecordsAreQueriedNewestFirstInPages) {
  VisibilityArchive archive(uri_, *store_);
  const absl::Time base = absl::FromUnixSeconds(1'780'000'000);
  for (int i = 0; i < 5; ++i) {
    tock::archiver::v1::VisibilityRecord r;
    r.set_namespace_id("ns-id");
    r.set_namespace_("ns");
    r.set_workflow_id("wf-" + std::to_string(i));
    r.set_run_id("run-" + std::to_string(i));
    r.set_workflow_type_name(i % 2 == 0 ? "even" : "odd");
    *r.mutable_start_time() = ToProtoTime(base);
    *r.mutable_close_time() = ToProtoTime(base + absl::Minutes(i));
    r.set_status(temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_COMPLETED);
    ASSERT_TRUE(archive.Archive(r).ok());
  }
  const std::string file = "ns-id/" + std::to_string(absl::ToUnixNanos(base + absl::Minutes(2))) +
                           "_" + std::to_string(Fingerprint64("run-2")) + ".visibility";
  EXPECT_TRUE(fs::exists(dir_ / file)) << file;

  const absl::Time now = base + absl::Hours(1);
  auto first = archive.Query("ns-id", "", 2, "", now);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->executions.size(), 2u);
  EXPECT_EQ(first->executions[0].execution().workflow_id(), "wf-4");
  EXPECT_EQ(first->executions[1].execution().workflow_id(), "wf-3");
  ASSERT_FALSE(first->next_page_token.empty());
  auto second = archive.Query("ns-id", "", 10, first->next_page_token, now);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->executions.size(), 3u);
  EXPECT_EQ(second->executions[0].execution().workflow_id(), "wf-2");
  EXPECT_TRUE(second->next_page_token.empty());

  auto even = archive.Query("ns-id", "WorkflowType='even' AND ExecutionStatus='completed'", 10, "", now);
  ASSERT_TRUE(even.ok());
  EXPECT_EQ(even->executions.size(), 3u);
  auto late = archive.Query("ns-id", "CloseTime > " + std::to_string(absl::ToUnixNanos(base + absl::Minutes(3))), 10, "", now);
  ASSERT_TRUE(late.ok());
  ASSERT_EQ(late->executions.size(), 1u);
  EXPECT_EQ(late->executions[0].execution().run_id(), "run-4");
  EXPECT_EQ(archive.Query("ns-id", "", 10, "garbage", now).status().message(),
            "next page token is corrupted");
  EXPECT_TRUE(archive.Query("other-ns", "", 10, "", now)->executions.empty());
}

}  // namespace
}  // namespace tock::archival
