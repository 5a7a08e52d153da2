// The libpq functions the PostgreSQL backend (and its tests) call, defined here so that the
// binaries need no libpq at start-up: each resolves the real function on its first call
// (libpq_stubs.h). The prototypes are libpq-fe.h's own: a stub whose signature drifted from
// the header would not compile.
#include "server-core/persistence/postgres/libpq_stubs.h"

#include <libpq-fe.h>

namespace tock::persistence {

LazyLibrary& Libpq() {
  static LazyLibrary library("libpq.so.5", "libpq5");
  return library;
}

}  // namespace tock::persistence

// Calls the real `name` with the stub's arguments.
#define TOCK_LIBPQ_FORWARD(name, ...)                   \
  TOCK_LAZY_REAL(tock::persistence::Libpq(), name); \
  return real(__VA_ARGS__)

extern "C" {

PGconn* PQconnectdbParams(const char* const* keywords, const char* const* values,
                          int expand_dbname) {
  TOCK_LIBPQ_FORWARD(PQconnectdbParams, keywords, values, expand_dbname);
}
PQconninfoOption* PQconninfoParse(const char* conninfo, char** errmsg) {
  TOCK_LIBPQ_FORWARD(PQconninfoParse, conninfo, errmsg);
}
void PQconninfoFree(PQconninfoOption* options) { TOCK_LIBPQ_FORWARD(PQconninfoFree, options); }
void PQfinish(PGconn* conn) { TOCK_LIBPQ_FORWARD(PQfinish, conn); }
ConnStatusType PQstatus(const PGconn* conn) { TOCK_LIBPQ_FORWARD(PQstatus, conn); }
PGTransactionStatusType PQtransactionStatus(const PGconn* conn) {
  TOCK_LIBPQ_FORWARD(PQtransactionStatus, conn);
}
char* PQerrorMessage(const PGconn* conn) { TOCK_LIBPQ_FORWARD(PQerrorMessage, conn); }
int PQsocket(const PGconn* conn) { TOCK_LIBPQ_FORWARD(PQsocket, conn); }
int PQbackendPID(const PGconn* conn) { TOCK_LIBPQ_FORWARD(PQbackendPID, conn); }
PQnoticeProcessor PQsetNoticeProcessor(PGconn* conn, PQnoticeProcessor proc, void* arg) {
  TOCK_LIBPQ_FORWARD(PQsetNoticeProcessor, conn, proc, arg);
}
void PQfreemem(void* ptr) { TOCK_LIBPQ_FORWARD(PQfreemem, ptr); }

PGresult* PQexec(PGconn* conn, const char* query) { TOCK_LIBPQ_FORWARD(PQexec, conn, query); }
PGresult* PQexecParams(PGconn* conn, const char* command, int n_params, const Oid* param_types,
                       const char* const* param_values, const int* param_lengths,
                       const int* param_formats, int result_format) {
  TOCK_LIBPQ_FORWARD(PQexecParams, conn, command, n_params, param_types, param_values,
                     param_lengths, param_formats, result_format);
}
PGresult* PQprepare(PGconn* conn, const char* stmt_name, const char* query, int n_params,
                    const Oid* param_types) {
  TOCK_LIBPQ_FORWARD(PQprepare, conn, stmt_name, query, n_params, param_types);
}
PGresult* PQexecPrepared(PGconn* conn, const char* stmt_name, int n_params,
                         const char* const* param_values, const int* param_lengths,
                         const int* param_formats, int result_format) {
  TOCK_LIBPQ_FORWARD(PQexecPrepared, conn, stmt_name, n_params, param_values, param_lengths,
                     param_formats, result_format);
}
int PQsendQueryParams(PGconn* conn, const char* command, int n_params, const Oid* param_types,
                      const char* const* param_values, const int* param_lengths,
                      const int* param_formats, int result_format) {
  TOCK_LIBPQ_FORWARD(PQsendQueryParams, conn, command, n_params, param_types, param_values,
                     param_lengths, param_formats, result_format);
}
int PQsendQueryPrepared(PGconn* conn, const char* stmt_name, int n_params,
                        const char* const* param_values, const int* param_lengths,
                        const int* param_formats, int result_format) {
  TOCK_LIBPQ_FORWARD(PQsendQueryPrepared, conn, stmt_name, n_params, param_values,
                     param_lengths, param_formats, result_format);
}
PGresult* PQgetResult(PGconn* conn) { TOCK_LIBPQ_FORWARD(PQgetResult, conn); }
int PQenterPipelineMode(PGconn* conn) { TOCK_LIBPQ_FORWARD(PQenterPipelineMode, conn); }
int PQexitPipelineMode(PGconn* conn) { TOCK_LIBPQ_FORWARD(PQexitPipelineMode, conn); }
int PQpipelineSync(PGconn* conn) { TOCK_LIBPQ_FORWARD(PQpipelineSync, conn); }

ExecStatusType PQresultStatus(const PGresult* res) { TOCK_LIBPQ_FORWARD(PQresultStatus, res); }
char* PQresultErrorField(const PGresult* res, int field_code) {
  TOCK_LIBPQ_FORWARD(PQresultErrorField, res, field_code);
}
char* PQcmdTuples(PGresult* res) { TOCK_LIBPQ_FORWARD(PQcmdTuples, res); }
int PQntuples(const PGresult* res) { TOCK_LIBPQ_FORWARD(PQntuples, res); }
int PQnfields(const PGresult* res) { TOCK_LIBPQ_FORWARD(PQnfields, res); }
Oid PQftype(const PGresult* res, int field) { TOCK_LIBPQ_FORWARD(PQftype, res, field); }
char* PQgetvalue(const PGresult* res, int row, int field) {
  TOCK_LIBPQ_FORWARD(PQgetvalue, res, row, field);
}
int PQgetlength(const PGresult* res, int row, int field) {
  TOCK_LIBPQ_FORWARD(PQgetlength, res, row, field);
}
int PQgetisnull(const PGresult* res, int row, int field) {
  TOCK_LIBPQ_FORWARD(PQgetisnull, res, row, field);
}
void PQclear(PGresult* res) { TOCK_LIBPQ_FORWARD(PQclear, res); }

}  // extern "C"
