package smtpmail

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/platform/value"
)

// MaxSubjectLength is the longest subject accepted, in characters.
const MaxSubjectLength = 500

// checkSubject reports whether s can be a message's subject: not blank,
// one line of at most MaxSubjectLength characters without control
// characters (a line break would let the subject add headers of its own).
func checkSubject(s string) error {
	if value.Blank(s) || !value.Text(s, MaxSubjectLength, value.OneLine) {
		return fmt.Errorf("smtp: the subject must be one line of 1 to %d characters without control characters", MaxSubjectLength)
	}
	return nil
}

// parseFrom parses the configured sender, "noreply@agency.example" or
// "Agency <noreply@agency.example>": one line without control characters,
// whose address is an email address by the platform's rule.
func parseFrom(s string) (*mail.Address, error) {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return nil, errors.New("the address must be one line without control characters")
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("not an email address (%v)", strings.TrimPrefix(err.Error(), "mail: "))
	}
	if !value.EmailAddress(a.Address, 0) {
		return nil, fmt.Errorf("the address must be %s", value.Rule{Kind: value.Email}.Expected())
	}
	return a, nil
}

// newMessageID returns "<32 hex digits@the sender's domain>".
func (m *Mailer) newMessageID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("smtp: message id: %w", err)
	}
	return "<" + hex.EncodeToString(b[:]) + "@" + m.fromHost + ">", nil
}

// build writes the message: headers, then a multipart/alternative body
// with a text/plain part derived from html and html itself, both
// quoted-printable UTF-8, every line ending in CRLF.
func (m *Mailer) build(to *mail.Address, subject, html, messageID string, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)

	header := func(name, value string) {
		buf.WriteString(fold(name + ": " + value))
		buf.WriteString("\r\n")
	}
	header("From", m.fromHdr)
	header("To", to.String())
	header("Subject", encodeHeader(subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", messageID)
	header("MIME-Version", "1.0")
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	buf.WriteString("\r\n")

	for _, part := range []struct{ contentType, body string }{
		{"text/plain; charset=utf-8", htmlToText(html)},
		{"text/html; charset=utf-8", html},
	} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.contentType},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, fmt.Errorf("smtp: build message: %w", err)
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(part.body)); err != nil {
			return nil, fmt.Errorf("smtp: build message: %w", err)
		}
		if err := qp.Close(); err != nil {
			return nil, fmt.Errorf("smtp: build message: %w", err)
		}
	}
	if err := mw.Close(); err != nil {
		return nil, fmt.Errorf("smtp: build message: %w", err)
	}
	return buf.Bytes(), nil
}

// encodeHeader encodes s as RFC 2047 words when it is not plain ASCII, or
// when it holds "=?", which a reader would take for the start of one.
func encodeHeader(s string) string {
	if !strings.Contains(s, "=?") {
		return mime.QEncoding.Encode("utf-8", s)
	}
	// mime's encoder leaves ASCII alone, so the words are made here: each
	// holds whole characters, at most 45 bytes, 75 characters encoded.
	var words []string
	for s != "" {
		n := 0
		for _, r := range s {
			if n+utf8.RuneLen(r) > 45 {
				break
			}
			n += utf8.RuneLen(r)
		}
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}

// fold breaks a header line at spaces so that its lines stay near 78
// characters (RFC 5322 2.1.1); a word longer than that keeps its own line.
// Encoded words are at most 75 characters, so an encoded subject always
// folds.
func fold(line string) string {
	const limit = 78
	if len(line) <= limit {
		return line
	}
	words := strings.Split(line, " ")
	var b strings.Builder
	n := 0
	for i, w := range words {
		switch {
		case i == 0:
		case n+1+len(w) > limit && n > 0 && w != "":
			b.WriteString("\r\n")
			n = 0
			fallthrough
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
