package provider

import "context"

// Mailer sends email.
type Mailer interface {
	Send(ctx context.Context, m Mail) (SentMail, error)
}

// Mail is one message. The sender is the mailer's configured address.
type Mail struct {
	To, Subject, HTML string
}

// SentMail is what the mail server accepted.
type SentMail struct {
	MessageID string
	From      string
}
