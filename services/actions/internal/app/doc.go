// Package app is the actions service's domain: the catalog of actions of
// the action interface (POST /api/v1/data), the validation of their
// fields, the credits they spend, the runs that record them, the completion
// events they publish through the outbox, and the ports through which the
// actions do their work (language models, web pages, mail, search engines,
// images, SEO data) and write their records (the data service).
package app
