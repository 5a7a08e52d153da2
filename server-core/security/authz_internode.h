// The start-time check that calls between clusters can be authorized. With `authorization:`
// on, a call from another cluster (replication pulls, DC redirection, namespace and DLQ calls)
// arrives on the frontend with no token: it is let through only by its client certificate,
// tls.internode's, whose subject `authorization.subjects` must map to temporal-system:admin
// on the receiving cluster. (Calls between the hosts of one database and a server's calls to
// its own frontend need no mapping: routing/peer_credential.h.) A server
// configured so that its own certificate would be refused does not start, rather than fail
// every replication call later with UNAUTHENTICATED.
//
// Thread safety: free functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "server-core/rpc/tls_credentials.h"
#include "server-core/security/authz_config.h"

namespace tock::server::security {

// The subject of the first certificate in the PEM file `cert_file` as gRPC reports a peer's
// (GRPC_X509_SUBJECT_PROPERTY_NAME): OpenSSL's X509_NAME_print_ex with XN_FLAG_RFC2253, what
// gRPC's TLS layer (tsi/ssl_transport_security.cc) computes. INVALID_ARGUMENT naming the file
// when it holds no certificate.
absl::StatusOr<std::string> CertificateSubject(const std::string& cert_file);

// OK when tls.internode sends no certificate, or when its subject is mapped to
// temporal-system:admin. Otherwise INVALID_ARGUMENT "config authorization.subjects: ..."
// naming the subject, the role and the entry to add (the exit status of a bad configuration).
absl::Status CheckInternodeSubject(const AuthorizationConfig& authorization,
                                   const rpc::InternodeTls& internode);

}  // namespace tock::server::security
