package filetype

import (
	"errors"
	"io"
)

// Probe reads an image's size from its bytes as they stream past, for an
// upload that is never held whole: Write hands each chunk to Dimensions,
// running beside the writer, until it has its answer; later chunks pass at
// no cost. Write fails once the header is found wrong, so that the upload
// can stop there.
type Probe struct {
	w    *io.PipeWriter
	done chan struct{}
	size Size
	err  error
}

// errEnough is what the reading side closes the pipe with once it has its
// answer: the writer stops handing it bytes.
var errEnough = errors.New("filetype: the header has been read")

// NewProbe starts reading the size of an image of kind t.
func NewProbe(t Type) *Probe {
	r, w := io.Pipe()
	p := &Probe{w: w, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.size, p.err = Dimensions(t, r)
		_ = r.CloseWithError(errEnough)
	}()
	return p
}

// Write implements io.Writer.
func (p *Probe) Write(b []byte) (int, error) {
	select {
	case <-p.done:
		if p.err != nil && !errors.Is(p.err, ErrNoSize) {
			return 0, p.err
		}
		return len(b), nil
	default:
	}
	if _, err := p.w.Write(b); err != nil {
		<-p.done // the reader closed the pipe: it has its answer
		if p.err != nil && !errors.Is(p.err, ErrNoSize) {
			return 0, p.err
		}
	}
	return len(b), nil
}

// Result ends the stream and returns the size: ErrNoSize for an SVG
// without one, or what is wrong with the header.
func (p *Probe) Result() (Size, error) {
	_ = p.w.Close()
	<-p.done
	return p.size, p.err
}

// Abort ends the probe without an answer, when the upload failed.
func (p *Probe) Abort() {
	_ = p.w.CloseWithError(errEnough)
	<-p.done
}
