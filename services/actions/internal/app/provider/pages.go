package provider

import (
	"context"
	"time"
)

// PageFetcher fetches a web page and reads what an audit checks.
type PageFetcher interface {
	Fetch(ctx context.Context, url string) (*Page, error)
}

// Page is a fetched web page as an audit sees it.
type Page struct {
	URL         string // as asked
	FinalURL    string // after redirects
	StatusCode  int
	Redirects   int
	ContentType string
	Bytes       int
	Elapsed     time.Duration
	Title       string
	// MetaDescription and MetaRobots are the content of those meta tags.
	MetaDescription string
	MetaRobots      string
	// Canonical is the href of <link rel="canonical">, resolved against
	// FinalURL.
	Canonical string
	// Lang is the <html lang> attribute.
	Lang     string
	Viewport bool
	Headings []Heading // in document order
	Images   []PageImage
	Links    []Link
	// Text is the visible text, whitespace collapsed, at most 100 KB.
	Text      string
	WordCount int
}

// Heading is an <h1> to <h6>.
type Heading struct {
	Level int
	Text  string
}

// PageImage is an <img>.
type PageImage struct {
	Src    string // resolved against the page
	Alt    string
	HasAlt bool // an alt attribute is present, even empty
}

// Link is an <a href>.
type Link struct {
	Href     string // resolved against the page
	Text     string
	Internal bool // same host as the page
	NoFollow bool
}
