#include "server-core/persistence/postgres/pg_db.h"

#include <poll.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server-core/persistence/postgres/libpq_stubs.h"

namespace tock::persistence {
namespace {

// Type OIDs of pg_type (stable since PostgreSQL 7; libpq ships no header for them).
constexpr Oid kBoolOid = 16;
constexpr Oid kByteaOid = 17;
constexpr Oid kCharOid = 18;
constexpr Oid kNameOid = 19;
constexpr Oid kInt8Oid = 20;
constexpr Oid kInt2Oid = 21;
constexpr Oid kInt4Oid = 23;
constexpr Oid kTextOid = 25;
constexpr Oid kVarcharOid = 1043;
constexpr Oid kVoidOid = 2278;

// Messages of PostgreSQL may quote input (an invalid value, a key): keep them bounded.
constexpr size_t kMaxReasonBytes = 300;
// Each connection prepares the fixed statements of the stores, a finite set; past this
// many (a caller passing built text to Query by mistake) statements run unprepared.
constexpr size_t kMaxPreparedStatements = 512;

// libpq's messages span lines ("...failed: Connection refused\n\tIs the server running...").
std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(std::min(text.size(), kMaxReasonBytes));
  for (char c : text) {
    if (out.size() >= kMaxReasonBytes) {
      out += "...";
      break;
    }
    const bool space = c == '\n' || c == '\t' || c == '\r';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool IsConnectionLoss(std::string_view sqlstate) {
  // Class 08: connection exception; 57P01..57P03: the server is shutting down, crashed or
  // cannot accept connections now.
  return sqlstate.substr(0, 2) == "08" || sqlstate == "57P01" || sqlstate == "57P02" ||
         sqlstate == "57P03";
}

bool Decodable(Oid type) {
  switch (type) {
    case kBoolOid:
    case kByteaOid:
    case kCharOid:
    case kNameOid:
    case kInt8Oid:
    case kInt2Oid:
    case kInt4Oid:
    case kTextOid:
    case kVarcharOid:
    case kVoidOid:
      return true;
    default:
      return false;
  }
}

uint64_t ReadBigEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

const char* EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

}  // namespace

absl::Status PgStatusFromSqlState(std::string_view sqlstate, std::string_view message) {
  // An integrity constraint's message names the constraint, the table and the key's values
  // ("duplicate key value violates unique constraint ..."); it can travel up to a client,
  // so only a fixed text is kept (the SQLSTATE tells an operator which constraint class).
  constexpr std::string_view kConstraint = "a constraint of the database refused the write";
  const std::string_view said = sqlstate.starts_with("23") ? kConstraint : message;
  const std::string text =
      absl::StrCat("postgres: ", OneLine(said), " (SQLSTATE ", std::string(sqlstate), ")");
  if (sqlstate == "23505") return absl::AlreadyExistsError(text);
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::AbortedError(text);
  // A statement_timeout or lock_timeout: the database is too slow now; retrying later may work.
  if (sqlstate == "57014" || sqlstate == "55P03") return absl::UnavailableError(text);
  if (IsConnectionLoss(sqlstate)) return absl::UnavailableError(text);
  return absl::InternalError(text);
}

// ---------------------------------------------------------------------------------------
// PgParam

PgParam PgParam::Int(int64_t value) {
  PgParam p;
  p.type_ = kInt8Oid;
  const uint64_t v = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) p.buffer_[i] = static_cast<char>((v >> (56 - 8 * i)) & 0xff);
  p.buffer_size_ = 8;
  return p;
}

PgParam PgParam::Bool(bool value) {
  PgParam p;
  p.type_ = kBoolOid;
  p.buffer_[0] = value ? 1 : 0;
  p.buffer_size_ = 1;
  return p;
}

PgParam PgParam::Text(std::string_view text) {
  PgParam p;
  p.type_ = kTextOid;
  p.view_ = text;
  return p;
}

PgParam PgParam::Bytes(std::string_view bytes) {
  PgParam p;
  p.type_ = kByteaOid;
  p.view_ = bytes;
  return p;
}

PgParam PgParam::Null() {
  PgParam p;
  p.is_null_ = true;
  return p;
}

// ---------------------------------------------------------------------------------------
// PgResult

PgResult::PgResult(PGresult* result) : result_(result) {}

int PgResult::rows() const { return result_ ? PQntuples(result_.get()) : 0; }
int PgResult::columns() const { return result_ ? PQnfields(result_.get()) : 0; }

int64_t PgResult::affected() const {
  if (!result_) return 0;
  int64_t n = 0;
  return absl::SimpleAtoi(PQcmdTuples(result_.get()), &n) ? n : 0;
}

bool PgResult::IsNull(int row, int column) const {
  return PQgetisnull(result_.get(), row, column) != 0;
}

int64_t PgResult::Int(int row, int column) const {
  const char* p = PQgetvalue(result_.get(), row, column);
  switch (PQftype(result_.get(), column)) {
    case kInt8Oid:
      return static_cast<int64_t>(ReadBigEndian(p, 8));
    case kInt4Oid:
      return static_cast<int32_t>(ReadBigEndian(p, 4));
    case kInt2Oid:
      return static_cast<int16_t>(ReadBigEndian(p, 2));
    case kBoolOid:
    case kCharOid:
      return p[0];
    default:
      return 0;
  }
}

std::string_view PgResult::View(int row, int column) const {
  return std::string_view(PQgetvalue(result_.get(), row, column),
                          PQgetlength(result_.get(), row, column));
}

// ---------------------------------------------------------------------------------------
// PgConn

PgConn::~PgConn() { PQfinish(conn_); }

absl::StatusOr<PgResult> PgConn::Finish(PGresult* raw) {
  PgResult owner(raw);  // cleared on every path
  if (raw == nullptr) {
    // libpq could not even build a result: out of memory or the connection is gone.
    broken_ = true;
    return pool_.Unavailable(OneLine(PQerrorMessage(conn_)));
  }
  const ExecStatusType status = PQresultStatus(raw);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) {
    for (int c = 0; c < PQnfields(raw); ++c) {
      if (!Decodable(PQftype(raw, c))) {
        return absl::InternalError(absl::StrCat(
            "postgres: result column ", c, " has type OID ", PQftype(raw, c),
            ", which Tock does not decode; allowed: bigint, integer, smallint, boolean, text, "
            "bytea"));
      }
    }
    return owner;
  }
  const char* sqlstate = PQresultErrorField(raw, PG_DIAG_SQLSTATE);
  if (sqlstate == nullptr || PQstatus(conn_) != CONNECTION_OK) {
    // An error libpq made itself (no SQLSTATE): the connection broke mid-call.
    broken_ = true;
    return pool_.Unavailable(OneLine(PQerrorMessage(conn_)));
  }
  const char* primary = PQresultErrorField(raw, PG_DIAG_MESSAGE_PRIMARY);
  const std::string_view message = primary != nullptr ? primary : "";
  if (IsConnectionLoss(sqlstate)) {
    broken_ = true;
    return pool_.Unavailable(OneLine(message));
  }
  return PgStatusFromSqlState(sqlstate, message);
}

absl::StatusOr<const std::string*> PgConn::PreparedName(const std::string& sql,
                                                        absl::Span<const PgParam> params) {
  // A NULL has no type and lets PostgreSQL infer one, so the same text bound with a value
  // and with a NULL are different prepared statements: the key carries the types.
  std::string key = sql;
  key += '\0';
  for (const PgParam& p : params) absl::StrAppend(&key, p.type(), ",");
  auto it = prepared_.find(key);
  if (it == prepared_.end()) {
    if (prepared_.size() >= kMaxPreparedStatements) return nullptr;
    std::vector<Oid> types;
    types.reserve(params.size());
    for (const PgParam& p : params) types.push_back(p.type());
    std::string name = absl::StrCat("tock_", prepared_.size() + 1);
    absl::StatusOr<PgResult> prepared =
        Finish(PQprepare(conn_, name.c_str(), sql.c_str(), static_cast<int>(params.size()),
                         types.data()));
    if (!prepared.ok()) return prepared.status();
    it = prepared_.emplace(std::move(key), std::move(name)).first;
  }
  return &it->second;
}

absl::StatusOr<PgResult> PgConn::Query(const std::string& sql, absl::Span<const PgParam> params) {
  absl::StatusOr<const std::string*> name = PreparedName(sql, params);
  if (!name.ok()) return name.status();
  if (*name == nullptr) return QueryOnce(sql, params);
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  std::vector<int> formats(params.size(), 1);
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].is_null()) continue;
    values[i] = params[i].data().data();
    lengths[i] = static_cast<int>(params[i].data().size());
  }
  return Finish(PQexecPrepared(conn_, (*name)->c_str(), static_cast<int>(params.size()),
                               values.data(), lengths.data(), formats.data(), 1));
}

std::vector<absl::StatusOr<PgResult>> PgConn::Pipeline(absl::Span<const PgStatement> statements) {
  std::vector<absl::StatusOr<PgResult>> out;
  auto fail_rest = [&](const absl::Status& s) {
    while (out.size() < statements.size()) out.push_back(s);
  };
  std::vector<const std::string*> names(statements.size(), nullptr);
  for (size_t i = 0; i < statements.size(); ++i) {
    if (statements[i].params.empty()) continue;
    absl::StatusOr<const std::string*> name = PreparedName(statements[i].sql, statements[i].params);
    if (!name.ok()) {
      fail_rest(name.status());
      return out;
    }
    names[i] = *name;
  }
  if (PQenterPipelineMode(conn_) != 1) {
    broken_ = true;
    fail_rest(pool_.Unavailable(OneLine(PQerrorMessage(conn_))));
    return out;
  }
  bool sent = true;
  for (size_t i = 0; i < statements.size() && sent; ++i) {
    const std::vector<PgParam>& params = statements[i].params;
    std::vector<Oid> types(params.size());
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size());
    std::vector<int> formats(params.size(), 1);
    for (size_t p = 0; p < params.size(); ++p) {
      types[p] = params[p].type();
      if (params[p].is_null()) continue;
      values[p] = params[p].data().data();
      lengths[p] = static_cast<int>(params[p].data().size());
    }
    const int n = static_cast<int>(params.size());
    sent = (names[i] != nullptr
                ? PQsendQueryPrepared(conn_, names[i]->c_str(), n, values.data(), lengths.data(),
                                      formats.data(), 1)
                : PQsendQueryParams(conn_, statements[i].sql.c_str(), n, types.data(),
                                    values.data(), lengths.data(), formats.data(), 1)) == 1;
  }
  if (!sent || PQpipelineSync(conn_) != 1) {
    broken_ = true;  // a half-sent pipeline: the connection is not reused
    fail_rest(pool_.Unavailable(OneLine(PQerrorMessage(conn_))));
    return out;
  }
  // Each statement's result, then the NULL that ends it; then the sync point.
  for (size_t i = 0; i < statements.size(); ++i) {
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) {
      broken_ = true;
      fail_rest(pool_.Unavailable(OneLine(PQerrorMessage(conn_))));
      return out;
    }
    if (PQresultStatus(r) == PGRES_PIPELINE_ABORTED) {
      PQclear(r);
      out.push_back(absl::AbortedError("not run: an earlier statement failed"));
    } else {
      out.push_back(Finish(r));
    }
    if (PGresult* extra = PQgetResult(conn_); extra != nullptr) {
      PQclear(extra);
      broken_ = true;
      fail_rest(absl::InternalError("postgres: a statement returned several results"));
      return out;
    }
  }
  PGresult* sync = PQgetResult(conn_);
  if (sync == nullptr || PQresultStatus(sync) != PGRES_PIPELINE_SYNC) broken_ = true;
  PQclear(sync);
  if (!broken_ && PQexitPipelineMode(conn_) != 1) broken_ = true;
  return out;
}

absl::StatusOr<PgResult> PgConn::QueryOnce(const std::string& sql,
                                           absl::Span<const PgParam> params) {
  std::vector<Oid> types(params.size());
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  std::vector<int> formats(params.size(), 1);
  for (size_t i = 0; i < params.size(); ++i) {
    types[i] = params[i].type();
    if (params[i].is_null()) continue;
    values[i] = params[i].data().data();
    lengths[i] = static_cast<int>(params[i].data().size());
  }
  return Finish(PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), types.data(),
                             values.data(), lengths.data(), formats.data(), 1));
}

absl::Status PgConn::Exec(const std::string& sql) {
  return Finish(PQexec(conn_, sql.c_str())).status();
}

bool PgConn::StillOpenAfterIdle() {
  if (broken_ || PQstatus(conn_) != CONNECTION_OK) return false;
  const int fd = PQsocket(conn_);
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  // An idle connection has nothing to read (Tock never LISTENs): anything readable is the
  // server's goodbye (a termination notice, then end of file) after a restart or an
  // administrator's pg_terminate_backend. Drop it rather than fail the caller's statement.
  return ::poll(&p, 1, 0) == 0;
}

// ---------------------------------------------------------------------------------------
// PgPool

PgPool::PgPool(std::vector<std::string> keys, std::vector<std::string> values,
               std::string address, std::string location, const PgPoolOptions& options)
    : keys_(std::move(keys)),
      values_(std::move(values)),
      address_(std::move(address)),
      location_(std::move(location)),
      options_(options) {}

PgPool::~PgPool() = default;

absl::Status PgPool::Unavailable(std::string_view reason) const {
  return absl::UnavailableError(absl::StrCat("the PostgreSQL database at ", address_,
                                             " is unavailable: ", OneLine(reason)));
}

absl::StatusOr<std::unique_ptr<PgPool>> PgPool::Open(const std::string& url,
                                                     const PgPoolOptions& options) {
  if (options.max_connections < 1 || options.max_connections > 10000) {
    return absl::InvalidArgumentError(
        absl::StrCat("persistence.postgres.max_connections is ", options.max_connections,
                     "; allowed: 1 to 10000"));
  }
  if (absl::Status s = Libpq().Load(); !s.ok()) return s;
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &parse_error);
  if (parsed == nullptr) {
    // libpq's message may quote the URL, and the URL may hold a password: not repeated.
    PQfreemem(parse_error);
    return absl::InvalidArgumentError(
        "persistence.postgres.url is not a PostgreSQL URL libpq can parse; expected "
        "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB");
  }
  std::vector<std::string> keys, values;
  auto value_of = [&](std::string_view key) -> const char* {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return values[i].c_str();
    }
    return nullptr;
  };
  for (PQconninfoOption* o = parsed; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    keys.emplace_back(o->keyword);
    values.emplace_back(o->val);
  }
  PQconninfoFree(parsed);
  // Tock's defaults, unless the URL says otherwise: a bounded connect, keepalives so that a
  // vanished server is noticed, and a name in pg_stat_activity.
  const std::pair<const char*, std::string> defaults[] = {
      {"connect_timeout", std::to_string(std::max(2, options.connect_timeout_seconds))},
      {"application_name", "tock-server"},
      {"keepalives", "1"},
      {"keepalives_idle", "30"},
      {"keepalives_interval", "10"},
      {"keepalives_count", "3"},
  };
  for (const auto& [key, value] : defaults) {
    if (value_of(key) == nullptr) {
      keys.emplace_back(key);
      values.emplace_back(value);
    }
  }
  // How errors and banners name the database: what libpq will use, from the URL or the
  // PG* environment variables, never the password.
  const char* host = value_of("host");
  if (host == nullptr) host = value_of("hostaddr");
  if (host == nullptr) host = EnvOr("PGHOST", "localhost");
  const char* port = value_of("port");
  if (port == nullptr) port = EnvOr("PGPORT", "5432");
  const char* user = value_of("user");
  if (user == nullptr) user = EnvOr("PGUSER", "");
  const char* db = value_of("dbname");
  if (db == nullptr) db = EnvOr("PGDATABASE", user);
  std::string address = absl::StrCat(host, ":", port, "/", db);
  std::string location =
      absl::StrCat("postgresql://", user, *user != '\0' ? "@" : "", address);

  std::unique_ptr<PgPool> pool(new PgPool(std::move(keys), std::move(values),
                                          std::move(address), std::move(location), options));
  // One connection now: an unreachable database is an error at start, not at first use.
  {
    absl::StatusOr<Lease> first = pool->Acquire();
    if (!first.ok()) return first.status();
  }
  return pool;
}

absl::StatusOr<std::unique_ptr<PgConn>> PgPool::Connect() {
  std::vector<const char*> keys, values;
  for (size_t i = 0; i < keys_.size(); ++i) {
    keys.push_back(keys_[i].c_str());
    values.push_back(values_[i].c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* raw = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/0);
  if (raw == nullptr) return Unavailable("out of memory");
  if (PQstatus(raw) != CONNECTION_OK) {
    absl::Status s = Unavailable(PQerrorMessage(raw));
    PQfinish(raw);
    return s;
  }
  // Notices (CREATE TABLE IF NOT EXISTS ... skipping) are not errors: keep them off stderr.
  PQsetNoticeProcessor(raw, [](void*, const char*) {}, nullptr);
  std::unique_ptr<PgConn> conn(new PgConn(*this, raw));
  if (absl::Status s = conn->Exec(absl::StrCat(
          "SET idle_in_transaction_session_timeout = ",
          options_.idle_in_transaction_timeout.count(),
          "; SET statement_timeout = ", options_.statement_timeout.count(),
          "; SET default_transaction_isolation = 'read committed'"
          // Every prepared statement is a store's fixed text finding rows by their keys, for
          // which the generic plan is the custom one; left to choose, PostgreSQL planned some
          // of them again on every call (the timer statement: 0.09 ms of planning for 0.02 ms
          // of work). Text built at run time (QueryOnce) is not prepared, so still planned
          // with its values.
          "; SET plan_cache_mode = force_generic_plan"));
      !s.ok()) {
    return s;
  }
  return conn;
}

absl::StatusOr<PgPool::Lease> PgPool::Acquire() {
  const auto deadline = std::chrono::steady_clock::now() + options_.acquire_timeout;
  std::unique_lock lock(mu_);
  while (true) {
    while (!idle_.empty()) {
      std::unique_ptr<PgConn> conn = std::move(idle_.back());
      idle_.pop_back();
      lock.unlock();
      if (conn->StillOpenAfterIdle()) return Lease(this, conn.release());
      conn.reset();  // closed outside the lock: PQfinish may write to the socket
      lock.lock();
      --open_;
    }
    if (open_ < options_.max_connections) {
      ++open_;
      lock.unlock();
      absl::StatusOr<std::unique_ptr<PgConn>> conn = Connect();
      if (!conn.ok()) {
        lock.lock();
        --open_;
        released_.notify_one();
        return conn.status();
      }
      return Lease(this, conn->release());
    }
    if (released_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= options_.max_connections) {
      return absl::UnavailableError(absl::StrCat(
          "all ", options_.max_connections, " connections to the PostgreSQL database at ",
          address_, " stayed busy for ", options_.acquire_timeout.count(),
          " ms; raise persistence.postgres.max_connections or reduce the load"));
    }
  }
}

void PgPool::Release(PgConn* raw) {
  std::unique_ptr<PgConn> conn(raw);
  // A connection left inside a transaction (a failed ROLLBACK) must not be reused: its
  // next user would run inside someone else's transaction.
  const bool reusable = conn->healthy() && PQtransactionStatus(conn->conn_) == PQTRANS_IDLE;
  if (!reusable) conn.reset();
  std::lock_guard lock(mu_);
  if (reusable) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
  released_.notify_one();
}

PgPool::Lease::~Lease() {
  if (conn_ != nullptr) pool_->Release(conn_);
}

absl::Status PgPool::WithConnection(const std::function<absl::Status(PgConn&)>& fn) {
  absl::StatusOr<Lease> lease = Acquire();
  if (!lease.ok()) return lease.status();
  return fn(**lease);
}

absl::Status PgPool::InTransaction(const std::function<absl::Status(PgConn&)>& fn) {
  absl::StatusOr<Lease> lease = Acquire();
  if (!lease.ok()) return lease.status();
  PgConn& conn = **lease;
  if (absl::Status s = conn.Exec("BEGIN"); !s.ok()) return s;
  absl::Status result = fn(conn);
  if (result.ok() && PQtransactionStatus(conn.conn_) == PQTRANS_INERROR) {
    // A statement failed and the callback went on: COMMIT would silently roll back.
    result = absl::InternalError(
        "postgres: a statement of the transaction failed and the transaction was rolled back");
  }
  if (result.ok()) return conn.Exec("COMMIT");
  if (conn.healthy() && !conn.Exec("ROLLBACK").ok()) conn.broken_ = true;
  return result;
}

absl::StatusOr<PgResult> PgPool::Query(const std::string& sql, absl::Span<const PgParam> params) {
  absl::StatusOr<Lease> lease = Acquire();
  if (!lease.ok()) return lease.status();
  return (*lease)->Query(sql, params);
}

int PgPool::open_connections() const {
  std::lock_guard lock(mu_);
  return open_;
}

int PgPool::idle_connections() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(idle_.size());
}

}  // namespace tock::persistence
