package builtintext

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// pressRelease writes a plain-text release: the announcement, a paragraph
// per body point, a spokesperson's quote and the "About" boilerplate.
func (w *writer) pressRelease() map[string]string {
	headline := w.in("headline", 200)
	client := firstNonEmpty(w.in("client_name", 80), "The company")
	domain := domainOf(w.in("client_domain", 120))
	if headline == "" {
		headline = client + " Shares an Update"
	}
	r := w.rng

	var paras []string
	paras = append(paras, fmt.Sprintf("%s today announced %s: %s. %s",
		client,
		r.pick("news for its customers and partners", "an update for its customers and the wider community", "a new development"),
		strings.TrimRight(headline, ".!"),
		r.pick(
			"The announcement reflects the company's continued focus on serving its customers well.",
			"It marks another step in the company's growth and its commitment to the people it serves.",
			"The news builds on the company's track record of practical, customer-first work.")))

	supports := []string{
		"The change is designed to make a practical difference for customers from day one.",
		"Customers can expect to see the benefit in the weeks ahead.",
		"It follows direct feedback from customers and partners.",
		"The team has prepared carefully to make the transition smooth.",
		"This builds on work the company has been doing over the past year.",
	}
	points := w.lines("body_points")
	if len(points) > 12 {
		points = points[:12]
	}
	supports = shuffle(r, supports)
	for i, pt := range points {
		paras = append(paras, sentence(clip(pt, 400))+" "+supports[i%len(supports)])
	}
	if len(points) == 0 {
		paras = append(paras,
			fmt.Sprintf("The announcement, \"%s\", is the result of months of preparation by the %s team, who have worked closely with customers to understand what matters most to them.", headline, client),
			"Further details, including timing and availability, will be shared through the company's usual channels.")
	}

	quote := r.pick(
		"We are proud to share this news. It reflects what our customers have told us they need, and we are looking forward to what comes next.",
		"This is an important moment for us. Our customers are at the heart of everything we do, and this announcement is a direct result of listening to them.",
		"We have worked hard to get this right. It is a practical step that will make a real difference to the people we serve.")
	paras = append(paras, fmt.Sprintf("\"%s\" said a spokesperson for %s.", strings.TrimSuffix(quote, ".")+",", client))

	aboutName := client
	if w.in("client_name", 80) == "" {
		aboutName = "the company"
	}
	about := fmt.Sprintf("About %s\n%s is a business dedicated to serving its customers with care, expertise and reliable results.", aboutName, client)
	if domain != "" {
		about += fmt.Sprintf(" To learn more, visit https://%s.", domain)
	}
	paras = append(paras, about, "###")
	return map[string]string{"title": headline, "body": strings.Join(paras, "\n\n")}
}

// maxGBPPost is the business-profile limit; the post stays under it.
const maxGBPPost = 1500

var ctas = map[string][]string{
	"book":       {"Book your appointment today.", "Book online now and pick a time that suits you."},
	"order":      {"Order now and we'll take care of the rest.", "Place your order today."},
	"shop":       {"Shop now and find what you need.", "Visit us and shop the range today."},
	"learn_more": {"Learn more on our website.", "Tap Learn more to find out the details."},
	"sign_up":    {"Sign up today and be the first to know.", "Sign up now; it only takes a minute."},
	"call":       {"Call us now to talk it through.", "Give us a call today; we're happy to help."},
	"":           {"Get in touch today to find out more.", "Visit us or get in touch to learn more."},
}

// gbpPost writes a business-profile post with a call to action.
func (w *writer) gbpPost() map[string]string {
	topic := firstNonEmpty(w.in("topic", 200), "our latest news")
	client := w.in("client_name", 80)
	cta := strings.ToLower(w.in("cta", 20))
	if _, ok := ctas[cta]; !ok {
		cta = ""
	}
	r := w.rng

	titleText := clip(title(topic), maxTitle)
	if client != "" && length(titleText)+length(client)+3 <= maxTitle && r.intn(2) == 0 {
		titleText += " at " + client
	}
	who := firstNonEmpty(client, "our team")
	body := strings.Join([]string{
		sentence(r.pick(
			"News from "+who+": "+topic,
			"Here's something we're excited about: "+topic,
			"Spotlight on "+topic)),
		r.pick(
			"Whether you're a long-time customer or discovering us for the first time, we'd love to help you make the most of it.",
			"We've put this together with our customers in mind, and we think you'll love it.",
			"It's one more way we're making life easier for the people we serve."),
		r.pick(
			"Our friendly team is on hand to answer your questions.",
			"Spaces and availability can be limited, so don't leave it too late.",
			"Check our profile for opening hours and directions."),
		r.pick(ctas[cta]...),
	}, " ")
	return map[string]string{"title": titleText, "body": clip(body, maxGBPPost-1)}
}

// outreachEmail writes a short collaboration proposal to a prospect site.
func (w *writer) outreachEmail() map[string]string {
	prospect := firstNonEmpty(domainOf(w.in("prospect_domain", 120)), domainOf(w.in("prospect_url", 300)), "your site")
	prospectURL := w.in("prospect_url", 300)
	client := firstNonEmpty(w.in("client_name", 80), "our team")
	domain := domainOf(w.in("client_domain", 120))
	tone := w.tone()
	r := w.rng

	clientRef := client
	if domain != "" {
		clientRef = client + " (" + domain + ")"
	}
	noticed := "I came across " + prospect
	if prospectURL != "" && domainOf(prospectURL) != prospectURL {
		noticed = "I came across your page at " + prospectURL
	}

	var subject, greeting, opening, ask, signoff string
	switch tone {
	case "friendly":
		subject = r.pick("A collaboration idea for "+prospect, "Loved your work on "+prospect+"!")
		greeting = "Hi " + prospect + " team,"
		opening = noticed + " and really enjoyed it. Your content is genuinely useful, which is why I'm getting in touch."
		ask = "Would you be open to a quick chat? No pressure at all, just let me know what you think."
		signoff = "Cheers,"
	case "casual":
		subject = r.pick("Quick idea for "+prospect, "Collab with "+prospect+"?")
		greeting = "Hey there,"
		opening = noticed + ", nice stuff."
		ask = "Interested? Just hit reply."
		signoff = "Thanks,"
	case "authoritative":
		subject = r.pick("Partnership proposal: "+client+" and "+prospect, "Content partnership with "+prospect)
		greeting = "Dear " + prospect + " team,"
		opening = noticed + ". Your audience overlaps closely with ours, and I believe a partnership would deliver measurable value to both."
		ask = "I would welcome fifteen minutes to discuss the details. Please let me know a time that suits you."
		signoff = "Regards,"
	case "playful":
		subject = r.pick(prospect+" + "+client+" = a good idea?", "An idea you might like, "+prospect)
		greeting = "Hello " + prospect + " team!"
		opening = noticed + " and, honestly, we're a little jealous of your content. So instead of staying jealous, we thought we'd say hello."
		ask = "If that sounds fun, reply and let's make something great together."
		signoff = "High fives,"
	default:
		subject = r.pick("Collaboration proposal for "+prospect, "A content collaboration with "+prospect)
		greeting = "Hello " + prospect + " team,"
		opening = noticed + " while researching resources our customers find useful, and I was impressed by the quality of your content."
		ask = "Would you be interested in discussing this? I would be glad to share some topic ideas."
		signoff = "Best regards,"
	}
	proposal := "I work with " + clientRef + ", and I'd like to propose a collaboration: " + r.pick(
		"we could write a useful, original guest article for your readers, with no fluff and no hard sell.",
		"we could create a resource together on a topic your readers care about and share it with both audiences.",
		"we could contribute expert insight or data to an existing article of yours, keeping it fresh and accurate for your readers.")
	lines := []string{greeting, "", opening, "", proposal, "", ask, "", signoff, client + " team"}
	if domain != "" {
		lines = append(lines, domain)
	}
	return map[string]string{"subject": subject, "body": strings.Join(lines, "\n")}
}

// pillars are the themes of a topical map; {T} is the topic in title case,
// {t} as given. Each has more clusters than the deepest map needs.
var pillars = []struct {
	name     string
	clusters []string
}{
	{"{T} Fundamentals", []string{"what is {t}", "how {t} works", "{t} terminology explained", "history of {t}", "types of {t}", "{t} myths and facts", "who needs {t}"}},
	{"{T} Strategy and Planning", []string{"{t} goals and priorities", "{t} planning checklist", "{t} budget planning", "{t} timeline", "choosing a {t} approach", "{t} risk assessment", "{t} roadmap template"}},
	{"Choosing {T} Providers and Tools", []string{"how to compare {t} providers", "questions to ask about {t}", "{t} pricing explained", "{t} tools and software", "{t} reviews and case studies", "red flags in {t} offers", "{t} contracts and guarantees"}},
	{"{T} Best Practices", []string{"{t} step by step", "{t} checklist", "common {t} mistakes", "{t} tips for beginners", "advanced {t} techniques", "{t} maintenance", "{t} quality standards"}},
	{"Measuring {T} Results", []string{"{t} metrics that matter", "tracking {t} progress", "{t} benchmarks", "{t} reporting", "{t} return on investment", "improving {t} results", "{t} audit checklist"}},
	{"Local and Industry {T}", []string{"{t} for small businesses", "{t} for local businesses", "{t} regulations", "{t} industry trends", "{t} case studies by industry", "{t} seasonal considerations", "future of {t}"}},
	{"{T} Costs and Value", []string{"how much does {t} cost", "{t} cost factors", "cheap vs premium {t}", "{t} financing options", "hidden costs of {t}", "{t} value for money", "{t} price comparison"}},
}

// topicalMap writes pillars and their clusters; clusters per pillar grow
// with depth: 2, 4, 6.
func (w *writer) topicalMap() map[string]string {
	topic := firstNonEmpty(w.in("topic", 80), w.in("keyword", 80), "your topic")
	// Colons and semicolons separate pillars from clusters in an outline
	// line; a topic must not add more.
	topic = strings.NewReplacer(":", " ", ";", ",").Replace(topic)
	topic = oneLine(topic)
	depth, err := strconv.Atoi(w.in("depth", 4))
	if err != nil || depth < 1 {
		depth = 2
	}
	depth = min(depth, 3)
	perPillar := 2 * depth
	r := w.rng
	count := 4 + r.intn(3)
	vars := map[string]string{"T": title(topic), "t": topic}

	order := shuffle(r, []int{0, 1, 2, 3, 4, 5, 6})[:count]
	// Fundamentals first reads better: a map grows from the basics.
	for i, p := range order {
		if p == 0 {
			order[0], order[i] = order[i], order[0]
		}
	}
	lines := make([]string, 0, count)
	names := make([]string, 0, count)
	for _, p := range order {
		pl := pillars[p]
		clusters := shuffle(r, pl.clusters)[:perPillar]
		for i, c := range clusters {
			clusters[i] = expand(c, vars)
		}
		name := expand(pl.name, vars)
		names = append(names, name)
		lines = append(lines, name+": "+strings.Join(clusters, "; "))
	}
	summary := fmt.Sprintf("A topical map for %s with %d pillars and %d supporting clusters, from %s to %s. Publish the pillar pages first, then link each cluster article to its pillar and to its neighbours to build topical authority.",
		topic, count, count*perPillar, strings.ToLower(names[0]), strings.ToLower(names[len(names)-1]))
	return map[string]string{"outline": strings.Join(lines, "\n"), "summary": summary}
}

// fixes turn an audit issue into an action, by the words it contains; the
// first match wins.
var fixes = []struct {
	match []string
	fix   string
}{
	{[]string{"title", "missing"}, "Add a unique <title> of 50 to 60 characters that leads with the page's main keyword."},
	{[]string{"title", "long"}, "Shorten the title to 60 characters or fewer so that search results show it in full."},
	{[]string{"title", "short"}, "Lengthen the title to 50 to 60 characters with the main keyword and a reason to click."},
	{[]string{"title", "duplicate"}, "Give this page a title of its own; duplicate titles make pages compete with each other."},
	{[]string{"meta description", "missing"}, "Write a meta description of 120 to 160 characters that summarises the page and ends with a call to action."},
	{[]string{"description", "long"}, "Trim the meta description to 160 characters or fewer so it is not cut off in results."},
	{[]string{"description", "short"}, "Expand the meta description to 120 to 160 characters, including the main keyword."},
	{[]string{"description"}, "Rewrite the meta description to 120 to 160 characters with the main keyword and a call to action."},
	{[]string{"h1", "multiple"}, "Keep a single <h1> per page and turn the others into <h2> subheadings."},
	{[]string{"h1"}, "Add one <h1> that states the page's topic and includes the main keyword."},
	{[]string{"alt"}, "Add descriptive alt text to every meaningful image; leave alt empty only on decorative ones."},
	{[]string{"canonical"}, "Add a <link rel=\"canonical\"> pointing to the preferred URL of this page."},
	{[]string{"viewport"}, "Add <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"> so the page renders well on phones."},
	{[]string{"lang"}, "Set the lang attribute on <html> (for example lang=\"en\") so search engines know the page's language."},
	{[]string{"noindex"}, "Remove the noindex directive if this page should appear in search results."},
	{[]string{"robots"}, "Check the robots meta tag and robots.txt so they do not block a page you want indexed."},
	{[]string{"https"}, "Serve the page over HTTPS and redirect the HTTP address to it."},
	{[]string{"redirect"}, "Link straight to the final URL to remove the redirect chain."},
	{[]string{"broken"}, "Fix or remove the broken links; point them to live pages."},
	{[]string{"404"}, "Fix or remove the links that return 404; point them to live pages."},
	{[]string{"slow"}, "Speed the page up: compress images, defer non-critical scripts and enable caching."},
	{[]string{"speed"}, "Speed the page up: compress images, defer non-critical scripts and enable caching."},
	{[]string{"thin"}, "Expand the content to at least 600 useful words that answer the searcher's questions."},
	{[]string{"word"}, "Expand the content to at least 600 useful words that answer the searcher's questions."},
	{[]string{"heading"}, "Structure the content with descriptive <h2> and <h3> subheadings in order."},
	{[]string{"internal link"}, "Add internal links from related pages, with descriptive anchor text."},
	{[]string{"image", "size"}, "Resize and compress large images, and serve them in a modern format such as WebP."},
	{[]string{"schema"}, "Add structured data (schema.org) that describes the page's business or content."},
}

// pageOptimization suggests a title and meta description and turns the
// audit's issues into fixes.
func (w *writer) pageOptimization() map[string]string {
	kw := w.in("keyword", 80)
	currentTitle := w.in("current_title", 200)
	currentH1 := w.in("current_h1", 200)
	pageURL := w.in("url", 300)
	site := domainOf(pageURL)
	r := w.rng

	// The brand is the part of the current title after a separator, or the
	// site's name.
	brand, topic := "", currentTitle
	for _, sep := range []string{" | ", " - ", " – ", " — ", " :: "} {
		if i := strings.LastIndex(currentTitle, sep); i > 0 {
			topic, brand = strings.TrimSpace(currentTitle[:i]), strings.TrimSpace(currentTitle[i+len(sep):])
			break
		}
	}
	if brand == "" && site != "" {
		brand = site
	}
	subject := firstNonEmpty(kw, topic, currentH1, site, "this page")

	// The longest title that fits is the most useful: an audit that finds
	// a short title should not be answered with another one.
	var titles []string
	if kw != "" {
		k := title(kw)
		desc := r.pick("A Complete Guide", "Expert Help", "What to Know")
		pitch := r.pick("Trusted Local Experts", "Expert Advice", "Get a Free Quote")
		if brand != "" {
			titles = append(titles, k+": "+desc+" | "+brand, k+" | "+pitch+" | "+brand, k+" | "+brand)
		}
		titles = append(titles, k+": "+desc, k+" | "+pitch, k)
	} else {
		if brand != "" {
			titles = append(titles, title(subject)+" | "+brand)
		}
		titles = append(titles, title(subject))
	}
	titleText := firstFit(maxTitle, titles...)
	if length(titleText) > maxTitle {
		titleText = clip(titleText, maxTitle)
	}

	extras := []string{"Get expert advice and a clear plan.", "Find out how we can help.", "Read more today."}
	if brand != "" {
		extras = append([]string{"Trusted by customers of " + brand + "."}, extras...)
	}
	lead := r.pick(
		"Looking for "+subject+"? Learn what to expect, how to choose and how we can help.",
		"Everything you need to know about "+subject+": options, costs and practical advice.",
		"Discover "+subject+" with clear answers, practical tips and help when you need it.")
	meta := fitLength(lead, extras, minMeta, maxMeta)

	var recs []string
	for _, issue := range w.lines("issues") {
		recs = append(recs, fixFor(issue))
	}
	if kw != "" {
		recs = append(recs, fmt.Sprintf("Use \"%s\" in the title, the H1, the first 100 words and at least one <h2> subheading.", kw))
		if currentH1 == "" || !strings.Contains(strings.ToLower(currentH1), strings.ToLower(kw)) {
			if currentH1 != "" {
				recs = append(recs, fmt.Sprintf("Rewrite the H1 (now \"%s\") to include \"%s\".", currentH1, kw))
			} else {
				recs = append(recs, fmt.Sprintf("Add an H1 that includes \"%s\".", kw))
			}
		}
		if currentTitle != "" && !strings.Contains(strings.ToLower(currentTitle), strings.ToLower(kw)) {
			recs = append(recs, fmt.Sprintf("Replace the current title (\"%s\") with the suggested one, which contains \"%s\".", currentTitle, kw))
		}
		recs = append(recs, fmt.Sprintf("Link to this page from related pages with anchor text that includes \"%s\".", kw))
	} else {
		recs = append(recs, "Choose one primary keyword for this page and use it in the title, the H1 and the first paragraph.")
	}
	return map[string]string{"title": titleText, "meta_description": meta, "recommendations": strings.Join(recs, "\n")}
}

func fixFor(issue string) string {
	lower := strings.ToLower(issue)
	for _, f := range fixes {
		all := true
		for _, m := range f.match {
			if !strings.Contains(lower, m) {
				all = false
				break
			}
		}
		if all {
			return f.fix
		}
	}
	return "Fix this issue: " + strings.TrimRight(clip(issue, 200), ".") + ". Then re-run the audit to confirm it is resolved."
}

var recommendReasons = []string{
	"is often mentioned for responsive service and clear, upfront pricing.",
	"has a strong reputation and consistently good customer reviews.",
	"is a solid choice if you value experience and a long track record.",
	"stands out for friendly communication and reliable follow-up.",
	"is known for fast turnaround without cutting corners.",
	"is worth a look for its range of services and flexible options.",
}

// llmAnswer answers a prompt as an answer engine would, recommending some of
// the brand and its competitors. Which are named, and in what order, follows
// from the request's hash: a visibility check sees the brand first, later or
// not at all, as it would with a real engine.
func (w *writer) llmAnswer() map[string]string {
	prompt := firstNonEmpty(w.in("prompt", 300), "your question")
	r := w.rng
	var candidates []string
	seen := map[string]bool{}
	addCandidate := func(name string) {
		name = oneLine(name)
		if name != "" && !seen[strings.ToLower(name)] {
			seen[strings.ToLower(name)] = true
			candidates = append(candidates, name)
		}
	}
	addCandidate(w.req.Hints["brand_name"])
	for _, c := range strings.Split(w.req.Hints["competitors"], ",") {
		addCandidate(c)
	}

	intro := r.pick(
		"Here are some options worth considering for \"%s\":",
		"Good question. Based on reputation and reviews, these are worth a look for \"%s\":",
		"When people ask \"%s\", these names come up most often:")
	intro = fmt.Sprintf(intro, strings.TrimRight(prompt, "?.! "))

	var named []string
	switch n := len(candidates); {
	case n == 1:
		if r.intn(3) > 0 {
			named = candidates
		}
	case n > 1:
		named = shuffle(r, candidates)[:2+r.intn(n-1)]
	}
	if len(named) == 0 {
		tips := []string{
			"Check recent reviews on more than one site, and read the negative ones too.",
			"Ask for a written quote that lists exactly what is included.",
			"Confirm licences, insurance or certifications where they apply.",
			"Prefer providers who answer questions clearly and promptly.",
		}
		lines := []string{fmt.Sprintf("There is no single best answer to \"%s\"; it depends on your needs and budget. A few things to look for:", strings.TrimRight(prompt, "?.! "))}
		for i, t := range shuffle(r, tips)[:3] {
			lines = append(lines, fmt.Sprintf("%d. %s", i+1, t))
		}
		lines = append(lines, "Comparing two or three options against these points usually makes the choice clear.")
		return map[string]string{"answer": strings.Join(lines, "\n")}
	}
	reasons := shuffle(r, recommendReasons)
	lines := []string{intro}
	for i, name := range named {
		lines = append(lines, fmt.Sprintf("%d. %s %s", i+1, name, reasons[i%len(reasons)]))
	}
	lines = append(lines, r.pick(
		"The best fit depends on your location, budget and timeline, so it is worth contacting two or three of them.",
		"Compare quotes and read recent reviews before you decide."))
	return map[string]string{"answer": strings.Join(lines, "\n")}
}

// speaker splits "Caller: text" into the speaker and the text.
var speaker = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z ]{0,20}):\s*(.*)$`)

var sentenceEnd = regexp.MustCompile(`[.!?]+(\s+|$)`)

// callSummary summarises a transcript in one to three sentences: what the
// caller wanted, how the business answered and the grades.
func (w *writer) callSummary() map[string]string {
	var callerSays, agentSays, unlabelled []string
	for _, line := range strings.Split(w.req.Inputs["transcript"], "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		m := speaker.FindStringSubmatch(line)
		if m == nil {
			unlabelled = append(unlabelled, splitSentences(line)...)
			continue
		}
		who := strings.ToLower(m[1])
		switch {
		case strings.Contains(who, "caller") || strings.Contains(who, "customer") || strings.Contains(who, "client") || strings.Contains(who, "prospect"):
			callerSays = append(callerSays, splitSentences(m[2])...)
		default:
			agentSays = append(agentSays, splitSentences(m[2])...)
		}
	}
	r := w.rng
	var out []string
	request := substantive(callerSays, "need", "want", "looking", "would like", "interested", "quote", "book", "appointment", "price", "cost", "help", "?")
	if request == "" && len(callerSays) == 0 {
		request = substantive(unlabelled)
	}
	if request != "" {
		out = append(out, fmt.Sprintf(r.pick("The caller explained: \"%s\"", "The caller got in touch about this: \"%s\"", "The caller's request: \"%s\""), clip(request, 200)))
	}
	if reply := substantive(agentSays, "book", "schedule", "appointment", "send", "quote", "call you back", "tomorrow", "today", "price", "available"); reply != "" {
		out = append(out, fmt.Sprintf("The business answered: \"%s\"", clip(reply, 200)))
	}
	lead, quality := w.in("lead_grade", 20), w.in("quality_grade", 20)
	switch {
	case lead != "" && quality != "":
		out = append(out, fmt.Sprintf("The call was graded %s as a lead and %s for quality.", lead, quality))
	case lead != "":
		out = append(out, fmt.Sprintf("The call was graded %s as a lead.", lead))
	case quality != "":
		out = append(out, fmt.Sprintf("The call was graded %s for quality.", quality))
	}
	if len(out) == 0 {
		out = append(out, "No transcript was available for this call, so there is nothing to summarise.")
	}
	return map[string]string{"summary": strings.Join(out, " ")}
}

func splitSentences(s string) []string {
	var out []string
	for s != "" {
		end := len(s)
		if loc := sentenceEnd.FindStringIndex(s); loc != nil {
			end = loc[1]
		}
		if part := strings.TrimSpace(s[:end]); part != "" {
			out = append(out, part)
		}
		s = s[end:]
	}
	return out
}

// substantive returns the first sentence of four words or more that holds
// one of the cues (any, without cues), else the first of four words or more.
func substantive(sentences []string, cues ...string) string {
	long := func(s string) bool { return len(strings.Fields(s)) >= 4 }
	for _, s := range sentences {
		lower := strings.ToLower(s)
		for _, c := range cues {
			if long(s) && strings.Contains(lower, c) {
				return s
			}
		}
	}
	for _, s := range sentences {
		if long(s) {
			return s
		}
	}
	return ""
}

// generic writes a field the kind does not define, from the request's
// instructions and inputs, shaped by the field's name.
func (w *writer) generic(f provider.TextField) string {
	subject := ""
	for _, name := range []string{"keyword", "topic", "headline", "prompt", "title", "url", "client_name"} {
		if subject = w.in(name, 120); subject != "" {
			break
		}
	}
	facts := w.facts()
	if subject == "" && len(facts) > 0 {
		subject = clip(facts[0][1], 120)
	}
	instructions := oneLine(w.req.Instructions)
	firstInstruction := ""
	if s := splitSentences(instructions); len(s) > 0 {
		firstInstruction = s[0]
	}
	if subject == "" {
		subject = firstNonEmpty(strings.TrimRight(clip(firstInstruction, 80), "."), strings.ReplaceAll(f.Name, "_", " "))
	}
	name := strings.ToLower(f.Name)
	switch {
	case strings.Contains(name, "title") || strings.Contains(name, "subject") || strings.Contains(name, "headline") || strings.Contains(name, "name"):
		return clip(title(subject), maxTitle)
	case strings.Contains(name, "meta") || strings.Contains(name, "summary") || strings.Contains(name, "description") || strings.Contains(name, "excerpt"):
		return fitLength(sentence("An overview of "+subject), []string{
			"Clear, practical information to help you decide.", "Find out what matters, what to avoid and where to start.", "Read more.",
		}, minMeta, maxMeta)
	}
	parts := []string{sentence("This piece covers " + subject)}
	if instructions != "" {
		parts = append(parts, "It was written to this brief: "+sentence(clip(instructions, 600)))
	}
	if len(facts) > 0 {
		var list []string
		for _, kv := range facts {
			list = append(list, strings.ReplaceAll(kv[0], "_", " ")+": "+clip(kv[1], 200))
		}
		parts = append(parts, "It draws on these details: "+strings.Join(list, "; ")+".")
	}
	return strings.Join(parts, " ")
}

// facts are the non-empty inputs, sorted by name.
func (w *writer) facts() [][2]string {
	var out [][2]string
	for k, v := range w.req.Inputs {
		if v = oneLine(v); v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// reportNarrative writes a client report's summary from its facts alone:
// an opening naming the client and the period, then the facts as
// sentences, two to a paragraph. It invents nothing: a figure that is not
// among the facts is not mentioned.
func (w *writer) reportNarrative() map[string]string {
	client, period := w.in("client_name", 200), w.in("period", 100)
	if client == "" {
		client = "the client"
	}
	open := w.rng.pick("Here is how %s went for %s.", "This report covers %s for %s.", "A summary of %s for %s.")
	paras := []string{fmt.Sprintf(open, period, client)}
	var cur []string
	for _, f := range w.lines("facts") {
		label, val, ok := strings.Cut(f, ":")
		if !ok {
			continue
		}
		cur = append(cur, fmt.Sprintf("%s: %s.", strings.TrimSpace(label), strings.TrimSpace(val)))
		if len(cur) == 2 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	if len(cur) > 0 {
		paras = append(paras, strings.Join(cur, " "))
	}
	if len(paras) == 1 {
		paras = append(paras, "Atrium holds no figures for this period yet.")
	}
	return map[string]string{"narrative": strings.Join(paras, "\n\n")}
}
