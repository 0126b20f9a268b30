package app

import "context"

// Recorder exposes the recorder to the external tests.
type Recorder struct{ r recorder }

// Record records r as the deliverer does.
func (x *Recorder) Record(ctx context.Context, s DeliveryStore, r AttemptRecord) error {
	return x.r.now(ctx, s, r)
}

// Pending is how many records wait for a write.
func (x *Recorder) Pending() int {
	x.r.mu.Lock()
	defer x.r.mu.Unlock()
	return len(x.r.pending)
}
