package web

import "testing"

// The dialler only passes checked addresses to the socket; control is the
// check that stays if that ever changes, so it is tested on its own.
func TestControlRefusesPrivateAddresses(t *testing.T) {
	f, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "169.254.169.254:80", "10.0.0.1:8080", "[::ffff:192.168.0.1]:80", "not an address"} {
		if err := f.control("tcp", addr, nil); err == nil {
			t.Errorf("control(%q) let the connection through", addr)
		}
	}
	if err := f.control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("control(public address) = %v, want nil", err)
	}
	allowing, err := New(Config{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := allowing.control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("AllowPrivate: control(127.0.0.1:80) = %v, want nil", err)
	}
}
