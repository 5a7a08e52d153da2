// A small RAII layer over libpq (PostgreSQL's C client): a bounded connection pool,
// typed parameters sent in binary, results read in binary, a per-connection cache of
// prepared statements, transactions, and errors as absl::Status.
//
// Errors (every call):
//   UNAVAILABLE        the database cannot be reached or the connection was lost
//                      ("the PostgreSQL database at HOST:PORT/DB is unavailable: <reason>"),
//                      or every pooled connection stayed busy past the acquire timeout;
//   ALREADY_EXISTS     a unique constraint was violated (SQLSTATE 23505);
//   ABORTED            a serialization failure or a deadlock (40001, 40P01): retry the
//                      whole transaction;
//   INTERNAL           anything else, with the SQLSTATE and PostgreSQL's primary message.
// No error ever carries the SQL text, parameter values or the password.
//
// Thread safety: PgPool is thread-safe. A PgConn belongs to the one thread that leased it
// (through a Lease, WithConnection or InTransaction) until it is given back. PgResult is a
// value that can be read from any thread once returned.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tock::persistence {

// One statement parameter. Integers and booleans travel in binary with their type
// (int8, bool); text as text (type text); bytes as bytea in binary; a NULL with no type, so
// PostgreSQL infers it from the statement. The views must stay alive until the statement
// has run (parameters are built in the call expression, so temporaries are fine).
class PgParam {
 public:
  static PgParam Int(int64_t value);
  static PgParam Bool(bool value);
  static PgParam Text(std::string_view text);
  static PgParam Bytes(std::string_view bytes);
  static PgParam Null();

  Oid type() const { return type_; }
  bool is_null() const { return is_null_; }
  // The value as sent (binary for int8/bool/bytea; the UTF-8 bytes for text).
  std::string_view data() const {
    return view_.data() != nullptr ? view_ : std::string_view(buffer_, buffer_size_);
  }

 private:
  PgParam() = default;
  Oid type_ = 0;
  bool is_null_ = false;
  std::string_view view_;
  char buffer_[8] = {};  // network-order int8 or bool
  int buffer_size_ = 0;
};

// The rows of one statement, read in binary. Every column must be one of int2, int4, int8,
// bool (read with Int/Bool), text, varchar, name or bytea (read with Text/Bytes/View): the
// constructor-side check turns any other type into an INTERNAL error of the call, so the
// accessors below cannot fail. Rows and columns are 0-based; reading outside them or a
// NULL with Int is undefined (check IsNull first).
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(PGresult* result);
  PgResult(PgResult&&) = default;
  PgResult& operator=(PgResult&&) = default;

  int rows() const;
  int columns() const;
  // Rows inserted/updated/deleted by an INSERT/UPDATE/DELETE (also with RETURNING).
  int64_t affected() const;

  bool IsNull(int row, int column) const;
  int64_t Int(int row, int column) const;  // int2, int4, int8 or bool (0/1)
  bool Bool(int row, int column) const { return Int(row, column) != 0; }
  std::string Text(int row, int column) const { return std::string(View(row, column)); }
  std::string Bytes(int row, int column) const { return std::string(View(row, column)); }
  // In place: valid while this result lives.
  std::string_view View(int row, int column) const;

 private:
  struct Clear {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  std::unique_ptr<PGresult, Clear> result_;
};

struct PgPoolOptions {
  // At most this many connections are open at once; all of them may stay idle.
  int max_connections = 20;
  // How long Lease() waits for a connection when all are busy before UNAVAILABLE.
  std::chrono::milliseconds acquire_timeout{10000};
  // Session settings of every new connection. idle_in_transaction_session_timeout makes
  // PostgreSQL end the session (and release its row locks) of a host that froze inside a
  // transaction, so that a shard steal cannot wait on it forever.
  std::chrono::milliseconds idle_in_transaction_timeout{30000};
  std::chrono::milliseconds statement_timeout{30000};
  // libpq's connect_timeout (whole seconds; at least 2 as libpq requires).
  int connect_timeout_seconds = 5;
};

class PgPool;

// One statement of PgConn::Pipeline. With parameters it runs as Query runs it (prepared once
// per connection); without, as given (BEGIN, SAVEPOINT ...). The parameters' views must
// stay alive until Pipeline returns.
struct PgStatement {
  std::string sql;
  std::vector<PgParam> params;
};

// One open connection. Used only through the pool (see Lease).
class PgConn {
 public:
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  // Runs `sql` ($1, $2 ... for the parameters) as a statement prepared once per connection
  // and cached by its text (a fixed statement of a store: the set is finite). Results come
  // back in binary.
  absl::StatusOr<PgResult> Query(const std::string& sql, absl::Span<const PgParam> params = {});
  // The same without preparing or caching: for text built at run time (a visibility query),
  // so that dynamic statements cannot grow the cache.
  absl::StatusOr<PgResult> QueryOnce(const std::string& sql,
                                     absl::Span<const PgParam> params = {});
  // Runs one or more statements without parameters or results (DDL, BEGIN, SET ...).
  absl::Status Exec(const std::string& sql);
  // Runs `statements` in order in ONE round trip (libpq's pipeline mode) and returns each
  // one's result. Once one fails, PostgreSQL skips the rest: they answer ABORTED ("not run:
  // an earlier statement failed"). UNAVAILABLE for those not answered when the connection
  // breaks. Statements not prepared yet are prepared first (a round trip each, once).
  std::vector<absl::StatusOr<PgResult>> Pipeline(absl::Span<const PgStatement> statements);

  // False once the connection is lost (it is then closed when given back, and a new one
  // is opened on next use).
  bool healthy() const { return !broken_ && PQstatus(conn_) == CONNECTION_OK; }
  // Inside a transaction in which a statement failed (COMMIT would roll it back).
  bool in_failed_transaction() const { return PQtransactionStatus(conn_) == PQTRANS_INERROR; }
  // How many statements this connection has prepared (for tests).
  size_t prepared_statements() const { return prepared_.size(); }
  // The server process serving this connection (for tests that kill a backend).
  int backend_pid() const { return PQbackendPID(conn_); }

 private:
  friend class PgPool;
  PgConn(PgPool& pool, PGconn* conn) : pool_(pool), conn_(conn) {}
  // Turns a finished PGresult into a PgResult or the status of its error; marks the
  // connection broken on a connection-class failure.
  absl::StatusOr<PgResult> Finish(PGresult* result);
  // The name of the prepared statement of `sql` with these parameter types, prepared on
  // first use; null when the cache is full (the caller then sends it unprepared).
  absl::StatusOr<const std::string*> PreparedName(const std::string& sql,
                                                  absl::Span<const PgParam> params);
  // Checks, without a round trip, that the server has not closed the connection while it
  // sat idle (a restarted server sends a termination notice and closes the socket).
  bool StillOpenAfterIdle();

  PgPool& pool_;
  PGconn* conn_;
  bool broken_ = false;
  std::unordered_map<std::string, std::string> prepared_;  // SQL (+ types) -> statement name
};

class PgPool {
 public:
  // Parses `url` (postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?PARAMS], or a libpq
  // key=value string) and opens one connection to check that the database is reachable.
  // INVALID_ARGUMENT for a URL libpq cannot parse or max_connections < 1 (the message
  // never repeats the URL, which may hold a password); UNAVAILABLE naming HOST:PORT/DB when
  // the database cannot be reached or refuses the login.
  static absl::StatusOr<std::unique_ptr<PgPool>> Open(const std::string& url,
                                                      const PgPoolOptions& options = {});
  // Every lease must have been given back.
  ~PgPool();

  // A leased connection, given back when the lease is destroyed (closed instead when it
  // broke). Move-only.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), conn_(other.conn_) {
      other.conn_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    PgConn& operator*() const { return *conn_; }
    PgConn* operator->() const { return conn_; }

   private:
    friend class PgPool;
    Lease(PgPool* pool, PgConn* conn) : pool_(pool), conn_(conn) {}
    PgPool* pool_;
    PgConn* conn_;
  };

  // An idle connection, or a new one when fewer than max_connections are open; waits up to
  // acquire_timeout when all are busy. A connection found closed by the server is replaced
  // transparently, so the pool recovers by itself once the database is back.
  absl::StatusOr<Lease> Acquire();

  // Runs `fn` on one leased connection in autocommit mode.
  absl::Status WithConnection(const std::function<absl::Status(PgConn&)>& fn);
  // BEGIN; fn; COMMIT on one leased connection (READ COMMITTED). Any error of `fn` or of
  // COMMIT rolls back and is returned as is. Not retried: ABORTED (deadlock) is returned
  // to the caller, who knows whether the work may be repeated.
  absl::Status InTransaction(const std::function<absl::Status(PgConn&)>& fn);
  // One statement on a leased connection, autocommit (a shortcut of WithConnection).
  absl::StatusOr<PgResult> Query(const std::string& sql, absl::Span<const PgParam> params = {});

  // "HOST:PORT/DB", as errors name the database.
  const std::string& address() const { return address_; }
  // "postgresql://USER@HOST:PORT/DB": the URL without its password or parameters, for
  // banners and DescribeCluster.
  const std::string& location() const { return location_; }
  const PgPoolOptions& options() const { return options_; }

  // Connections open now and, of those, idle (for tests).
  int open_connections() const;
  int idle_connections() const;

  // UNAVAILABLE "the PostgreSQL database at HOST:PORT/DB is unavailable: <reason>".
  absl::Status Unavailable(std::string_view reason) const;

 private:
  PgPool(std::vector<std::string> keys, std::vector<std::string> values, std::string address,
         std::string location, const PgPoolOptions& options);
  absl::StatusOr<std::unique_ptr<PgConn>> Connect();
  void Release(PgConn* conn);

  // libpq connection keywords and values (the parsed URL plus Tock's defaults).
  std::vector<std::string> keys_;
  std::vector<std::string> values_;
  std::string address_;
  std::string location_;
  PgPoolOptions options_;

  mutable std::mutex mu_;
  std::condition_variable released_;
  std::vector<std::unique_ptr<PgConn>> idle_;  // most recently used last
  int open_ = 0;                               // idle + leased + being opened
};

// The status for PostgreSQL's SQLSTATE `sqlstate` with primary message `message` (see the
// codes at the top). Exposed for tests.
absl::Status PgStatusFromSqlState(std::string_view sqlstate, std::string_view message);

}  // namespace tock::persistence
