// Package apperr is the error vocabulary of the services' application layers
// and the one place where it becomes gRPC status codes.
//
// Use cases return *Error values whose message is written for the API caller:
// it says what was wrong and what is allowed. Any other error is a fault;
// the interceptor logs it with the trace id and answers INTERNAL with a
// generic message, so internal text never reaches a client.
package apperr
