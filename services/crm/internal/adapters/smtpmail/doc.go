// Package smtpmail is the CRM's app.Mailer over SMTP: invitations and
// password resets, as plain text, handed to one mail server (a provider's
// submission server or a local relay) with STARTTLS or implicit TLS,
// optional AUTH PLAIN, and a deadline on the whole conversation. It takes
// the same settings as the actions service's mailer (--smtp-addr,
// --smtp-from, --smtp-username, --smtp-password, --smtp-tls).
package smtpmail
