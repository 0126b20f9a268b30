package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// embeddedNATS is the NATS server `atrium serve` starts when no --nats-url
// is given: JetStream on, loopback only, its store in a directory removed
// at shutdown unless one was given.
type embeddedNATS struct {
	srv     *server.Server
	tempDir string
}

func startNATS(addr, storeDir string) (*embeddedNATS, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS port %q: %w", portStr, err)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	e := &embeddedNATS{}
	if storeDir == "" {
		if storeDir, err = os.MkdirTemp("", "atrium-nats-"); err != nil {
			return nil, err
		}
		e.tempDir = storeDir
	}
	e.srv, err = server.NewServer(&server.Options{
		ServerName: "atrium-embedded",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   storeDir,
		NoSigs:     true,
		NoLog:      true,
		HTTPPort:   0,
	})
	if err != nil {
		e.stop()
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	go e.srv.Start()
	if !e.srv.ReadyForConnections(10 * time.Second) {
		e.stop()
		return nil, fmt.Errorf("embedded NATS did not start on %s (is the port taken? set --nats-embedded-addr or --nats-url)", addr)
	}
	return e, nil
}

func (e *embeddedNATS) url() string { return e.srv.ClientURL() }

func (e *embeddedNATS) stop() {
	if e.srv != nil {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
	}
	if e.tempDir != "" {
		_ = os.RemoveAll(e.tempDir)
	}
}
