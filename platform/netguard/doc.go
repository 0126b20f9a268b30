// Package netguard decides which network addresses an outbound request
// that a caller chose may reach: an audit's page, later a webhook's
// endpoint. Such a request is sent from inside the deployment's network;
// without the guard a caller could make Atrium read the cloud metadata
// service, a database's admin page or anything else only Atrium can reach,
// and report it back.
//
// The rule is checked at two moments, with one list of addresses:
//
//   - When the request is made (CheckURL, Guard.Field): the URL's host
//     must not be localhost, a private address literal in any spelling
//     (IPv4-mapped, NAT64, 6to4, the numeric forms inet_aton accepts). The
//     caller gets a 400 before anything is reserved or sent.
//   - When the connection is made (Guard.DialContext): the name is resolved
//     by the guard itself and only addresses that pass are dialled, every
//     redirect included, and the socket's address is checked once more
//     just before it connects. A name that resolves to a private address
//     cannot get past it.
package netguard
