// Package app is the webhooks service's core: its domain (the endpoints a
// tenant registers, and later their deliveries), the ports its use cases
// need, and the use cases. Adapters (memory, postgres) implement the ports
// and are held to the contract suites in storetest.
package app
