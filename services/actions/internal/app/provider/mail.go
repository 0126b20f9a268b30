package provider

import "context"

// Mailer sends email.
type Mailer interface {
	Send(ctx context.Context, m Mail) (SentMail, error)
}

// Mail is one message. The sender is the mailer's configured address.
type Mail struct {
	// To is one email address by the platform's rule (value.EmailAddress:
	// ASCII, at a domain name, no display name, no address literal); a
	// mailer sends nothing to any other.
	To string
	// Subject is one line; HTML is the body.
	Subject, HTML string
}

// SentMail is what the mail server accepted.
type SentMail struct {
	MessageID string
	From      string
}
