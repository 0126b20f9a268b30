// Package filetype knows the kinds of files assets may be: it tells them
// from their first bytes (Detect), reads what clients declare them to be
// (Declared), and reads an image's width and height from its header as
// the file streams past (Probe, Dimensions), without holding the file.
// Pure functions: the assets use cases decide what to allow.
package filetype
