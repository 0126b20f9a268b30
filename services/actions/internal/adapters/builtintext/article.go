package builtintext

import (
	"html"
	"strings"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Articles are 600 to 900 words: long enough to be worth publishing as a
// draft, short enough to edit.
const (
	minWords = 600
	maxWords = 900
)

// Titles and meta descriptions are sized for search results.
const (
	maxTitle = 60
	minMeta  = 120
	maxMeta  = 160
)

// articleTitles are per tone; {Subj} is the title-cased subject.
var articleTitles = map[string][]string{
	"professional":  {"{Subj}: A Practical Guide", "{Subj}: What You Need to Know", "A Practical Guide to {Subj}"},
	"friendly":      {"Your Friendly Guide to {Subj}", "{Subj} Made Simple", "{Subj}: Everything You Wanted to Know"},
	"casual":        {"{Subj}, Explained Without the Jargon", "{Subj}: The No-Fuss Guide", "The Quick Guide to {Subj}"},
	"authoritative": {"The Expert Guide to {Subj}", "{Subj}: What the Professionals Know", "{Subj}: The Definitive Guide"},
	"playful":       {"{Subj}: Less Scary Than You Think", "{Subj}, Minus the Headache", "Let's Talk {Subj}"},
}

var articleMetaLeads = map[string]string{
	"professional":  "Learn what {subj} involves, how to choose the right option and which mistakes to avoid.",
	"friendly":      "Curious about {subj}? Here's a simple guide to choosing well and avoiding the usual mistakes.",
	"casual":        "Everything worth knowing about {subj}, minus the jargon: how to choose and what to skip.",
	"authoritative": "An expert guide to {subj}: the factors that matter, a proven process and the mistakes to avoid.",
	"playful":       "Think {subj} is a headache? Our guide makes choosing easy, and maybe even a little fun.",
}

var articleOpeners = map[string][]string{
	"professional": {
		"Whether you are researching {subj} for the first time or revisiting a decision made years ago, a clear picture of your options saves time, money and frustration. This guide sets out what is involved, why it deserves careful attention and how to approach it step by step.",
		"Decisions about {subj} are easier when the facts are laid out plainly. This guide explains what is involved, why it deserves careful attention and how to approach it in a structured way, so that you can compare options with confidence.",
	},
	"friendly": {
		"If you have been wondering about {subj}, you are in good company: it is one of the questions we hear most often. The good news is that it gets much simpler once you know what to look for, so let's walk through it together, one step at a time.",
		"Thinking about {subj} but not sure where to start? Don't worry, we've got you. In this guide we'll explain the basics in plain language, share the steps we'd follow ourselves and point out a few pitfalls that are easy to miss.",
	},
	"casual": {
		"Let's be honest: {subj} isn't something most people think about until they suddenly need it. So here's the short version of everything worth knowing, minus the jargon, so you can make a call you're happy with.",
		"So you're looking into {subj}. Nice. Here's the stuff that actually matters, the steps that make it easy and the mistakes that trip people up, all without the sales pitch.",
	},
	"authoritative": {
		"When it comes to {subj}, small decisions carry real consequences. Drawing on years of hands-on experience, this guide explains what is involved, which factors actually determine a good outcome and how to avoid the mistakes we see most often.",
		"Few topics attract as much conflicting advice as {subj}. This guide cuts through it: it sets out the principles that consistently produce good results, the process professionals follow and the errors that cost people the most.",
	},
	"playful": {
		"Ah, {subj}: the topic that sounds simple right up until you try to sort it out. Don't worry, we've done the legwork. Grab a coffee, and in a few minutes you'll know more about it than most people ever do.",
		"Nobody wakes up excited about {subj}, and that's fine. Stick with us for a few minutes and you'll swap the head-scratching for a clear plan, a handful of smart questions and maybe even a smile.",
	},
}

var articleStepLeads = map[string]string{
	"professional":  "A structured approach removes most of the guesswork.",
	"friendly":      "Here's a simple process you can follow, even if you're short on time.",
	"casual":        "No need to overthink it.",
	"authoritative": "In our experience, the best results follow a consistent process.",
	"playful":       "Think of this as your treasure map, minus the pirates.",
}

var articleClosings = map[string][2]string{
	"professional": {"Conclusion",
		"A good decision about {subj} comes down to preparation: knowing what you need, comparing options on substance and agreeing on the details in writing. {ctaClient}"},
	"friendly": {"Wrapping Up",
		"We hope this guide has made {subj} feel a lot less daunting. Take it one step at a time, ask plenty of questions and trust your instincts. {ctaClient}"},
	"casual": {"The Bottom Line",
		"That's really all there is to {subj}: know what you want, compare a few options and get it in writing. Easy. {ctaClient}"},
	"authoritative": {"Key Takeaways",
		"The principles behind {subj} are consistent: define the need precisely, judge options on evidence, and commit only to clear written terms. Follow them and the outcome takes care of itself. {ctaClient}"},
	"playful": {"And That's a Wrap",
		"There you have it: {subj}, demystified. Define what you need, compare a few options, get it in writing and celebrate with a well-earned snack. {ctaClient}"},
}

// faqs are the questions an article may answer; three are chosen.
var faqs = [][2]string{
	{"How much should I budget for {kw}?",
		"It depends on the scope, the quality you need and how quickly you need it. The most reliable way to find out is to request two or three detailed quotes and compare exactly what each one includes."},
	{"How long does it take?",
		"Simple cases can be resolved quickly, while larger projects take longer to plan properly. Ask for a timeline up front and make sure it is written into the agreement."},
	{"How do I know if I need {kw}?",
		"If you are asking the question, it is worth a conversation. A short consultation usually shows whether you need help now, later or not at all."},
	{"Should I do it myself or hire a professional?",
		"Research and preparation are easy to do yourself. The parts that carry risk, cost or legal obligations are usually worth leaving to someone with experience."},
	{"What should I ask before I decide?",
		"Ask about experience with similar cases, what is included in the price, how problems are handled and who your day-to-day contact will be."},
}

// block is a piece of an article; optional blocks go when it runs long.
type block struct {
	html     string
	optional bool
}

// article writes a blog article, or a geo-targeted one about the keyword in
// a city.
func (w *writer) article(geo bool) map[string]string {
	kw := w.in("keyword", 80)
	if kw == "" {
		kw = firstNonEmpty(w.in("topic", 80), "your next project")
	}
	client := w.in("client_name", 80)
	domain := domainOf(w.in("client_domain", 120))
	city, state := w.in("city", 60), w.in("state", 40)
	if !geo || city == "" {
		geo = false
	}
	tone := w.tone()

	subj, headSubj := kw, title(kw)
	place := city
	if geo {
		if state != "" {
			place = city + ", " + state
		}
		subj = kw + " in " + place
		headSubj = title(kw) + " in " + city
	}
	vars := map[string]string{
		"kw": kw, "Kw": title(kw), "subj": subj, "Subj": headSubj,
		"client": firstNonEmpty(client, "our team"), "Client": firstNonEmpty(client, "Our Team"),
		"domain": domain, "city": city, "place": place,
	}
	if client != "" {
		vars["ctaClient"] = "When you are ready to take the next step, the team at " + client + " is happy to help."
	} else {
		vars["ctaClient"] = "When you are ready to take the next step, a short conversation with a specialist is a good place to start."
	}

	// Title: the tone's patterns, then shorter fallbacks, all with the
	// keyword.
	titles := articleTitles[tone]
	opts := make([]string, 0, len(titles))
	for _, t := range titles {
		opts = append(opts, expand(t, vars))
	}
	titleText := firstFit(maxTitle, w.rotate(opts)...)
	if length(titleText) > maxTitle {
		titleText = firstFit(maxTitle, headSubj+": A Guide", headSubj, title(kw)+" in "+city, title(kw))
	}

	// Meta description: the tone's lead, grown to 120 to 160 characters.
	extras := []string{"Step-by-step advice inside.", "Read the full guide.", "Practical tips you can use today.", "Read on."}
	if client != "" {
		extras = append([]string{"Practical advice from " + client + "."}, extras...)
	}
	if geo {
		extras = append([]string{"Local advice for " + city + "."}, extras...)
	}
	// A long keyword gets the shorter lead rather than a sentence cut short.
	lead := firstFit(maxMeta, expand(articleMetaLeads[tone], vars), expand("A practical guide to {subj}.", vars))
	meta := fitLength(lead, extras, minMeta, maxMeta)

	content := w.articleContent(geo, tone, vars)
	return map[string]string{"title": titleText, "meta_description": meta, "content": content}
}

func (w *writer) articleContent(geo bool, tone string, plain map[string]string) string {
	vars := make(map[string]string, len(plain))
	for k, v := range plain {
		vars[k] = html.EscapeString(v)
	}
	p := func(s string) string { return "<p>" + expand(s, vars) + "</p>" }
	h2 := func(s string) string { return "<h2>" + expand(s, vars) + "</h2>" }
	r := w.rng

	var blocks []block
	add := func(optional bool, parts ...string) {
		for _, s := range parts {
			blocks = append(blocks, block{html: s, optional: optional})
		}
	}

	// Introduction: the keyword in the first paragraph.
	add(false, p(r.pick(articleOpeners[tone]...)))
	intro := "Below you will find a plain explanation of the basics, a step-by-step approach you can follow, the most common mistakes to avoid and answers to the questions people ask most."
	if plain["client"] != "our team" {
		intro += " It is written by the team at {client}, who help customers with this every day."
	}
	add(true, p(intro))

	// What it is and why it matters.
	if geo {
		add(false, h2(r.pick("What to Know About {Subj}", "{Subj}: What It Is and Why It Matters")))
	} else {
		add(false, h2(r.pick("What Is {Subj} and Why Does It Matter?", "{Subj}: What It Is and Why It Matters", "Understanding {Subj}")))
	}
	add(false,
		p(r.pick(
			"At its simplest, {kw} is about matching the right solution to a specific need. The details differ from one situation to the next, which is exactly why a one-size-fits-all answer rarely works. Before comparing options, it helps to be clear about what you need, what you can spend and how soon you need a result.",
			"Put simply, {kw} means finding an approach that fits your situation rather than someone else's. Needs, budgets and timelines vary a great deal, so the first job is always to pin down what a good result looks like for you.")),
		p(r.pick(
			"Getting it right matters because the cost of a poor choice rarely shows up straight away. It appears later, as repeat work, wasted budget or time spent fixing problems that could have been avoided. A careful decision now tends to pay for itself many times over.",
			"It matters because mistakes here are expensive to undo. A rushed choice often leads to repeat work, unexpected costs and lost time, while a considered one keeps things running smoothly for years.")))
	if geo {
		add(false, p("{city} has its own character. Local regulations, the mix of older and newer properties, the seasons and even traffic all shape what good {kw} looks like in {place}. A provider who works in {city} regularly will already know these details, which saves you time and avoids surprises."))
	}
	add(true, p("It also matters for peace of mind. When you understand the options, you can ask better questions, spot weak answers quickly and judge proposals on substance rather than on sales talk."))

	// Step by step.
	if geo {
		add(false, h2(r.pick("How to Choose {Subj}: Step by Step", "A Step-by-Step Approach to {Subj}")))
	} else {
		add(false, h2(r.pick("How to Choose the Right {Subj}: Step by Step", "A Step-by-Step Approach to {Subj}")))
	}
	add(false, p(articleStepLeads[tone]+" The following steps keep the process simple and make sure nothing important is missed."))
	localStep := "Look at experience, reviews, guarantees and what is included in the price, not just the headline number."
	if geo {
		localStep = "Favour providers who work in {city} regularly, and look at their reviews, guarantees and what is included in the price, not just the headline number."
	}
	add(false, "<ol>"+
		"<li>"+expand("<strong>Define what you need.</strong> Write down the problem you want to solve, the result you expect and any deadline. A short brief makes every later conversation about {kw} faster.", vars)+"</li>"+
		"<li>"+expand("<strong>Set a realistic budget.</strong> Decide on a range rather than a single figure, and keep a margin for the unexpected.", vars)+"</li>"+
		"<li>"+expand("<strong>Compare at least three options.</strong> "+localStep, vars)+"</li>"+
		"<li>"+expand("<strong>Ask the right questions.</strong> How long will it take? What happens if something goes wrong? Who will you deal with day to day?", vars)+"</li>"+
		"<li>"+expand("<strong>Agree on everything in writing.</strong> A clear scope, timeline and price protect both sides and prevent misunderstandings later.", vars)+"</li>"+
		"</ol>")
	add(true, p("Following these steps will not make the decision for you, but it will make sure you decide with the full picture in front of you."))

	// Common mistakes.
	if geo {
		add(false, h2(r.pick("Common {Kw} Mistakes to Avoid in {city}", "Mistakes {city} Customers Make With {Kw}")))
	} else {
		add(false, h2(r.pick("Common {Subj} Mistakes to Avoid", "Mistakes People Make With {Subj}")))
	}
	add(false,
		p("Most problems with {kw} come from a handful of avoidable mistakes. Watch out for these:"),
		"<ul>"+
			"<li>Choosing on price alone, then paying more later to put things right.</li>"+
			"<li>Skipping reviews and references because an offer sounds convincing.</li>"+
			"<li>Leaving the details vague, so that expectations and results drift apart.</li>"+
			"<li>Waiting too long, which usually narrows the options and raises the cost.</li>"+
			"</ul>")
	add(true, p("Avoiding these four mistakes puts you ahead of most people who face the same decision."))

	// The client's angle.
	switch {
	case geo && plain["client"] != "our team":
		add(false, h2("Local {Subj} With {Client}"))
	case geo:
		add(false, h2("Finding Local Help With {Subj}"))
	case plain["client"] != "our team":
		add(false, h2(r.pick("{Subj} With {Client}", "How {Client} Helps With {Subj}")))
	default:
		add(false, h2("Getting Expert Help With {Subj}"))
	}
	switch {
	case plain["client"] == "our team" && geo:
		add(false, p("The right local specialist listens first, explains the options honestly and agrees on a clear plan before any work begins. Look for someone who works in {city} every week: they can usually respond quickly and give advice that fits local conditions in {place}."))
	case plain["client"] == "our team":
		add(false, p("The right specialist listens first, explains the options honestly and agrees on a clear plan before any work begins. Those are the qualities to look for when you choose who to work with on {kw}."))
	case geo:
		add(false, p("At {client}, we help customers across {place} with {kw}, and the same principles guide our own work: listen first, explain the options honestly and agree on a clear plan before any work begins. Because we work in {city} every week, we can usually respond quickly and give advice that fits local conditions."))
	default:
		add(false, p("At {client}, we help customers with {kw} every day, and the same principles guide our own work: listen first, explain the options honestly and agree on a clear plan before any work begins."))
	}
	switch {
	case plain["client"] == "our team":
		add(false, p("A short first conversation costs nothing and tells you a great deal: how quickly they respond, how clearly they explain things and whether they ask about your situation before quoting."))
	case plain["domain"] != "":
		add(false, p("You can read more about our services, see examples of recent work and get in touch through <a href=\"https://{domain}\">{domain}</a>."))
	default:
		add(false, p("Get in touch with us to talk through your situation; there is no obligation and no pressure."))
	}

	// Questions and answers.
	add(false, h2(r.pick("Frequently Asked Questions About {Subj}", "{Subj}: Your Questions Answered")))
	for _, i := range shuffle(r, []int{0, 1, 2, 3, 4})[:3] {
		add(false, "<h3>"+expand(faqs[i][0], vars)+"</h3>", p(faqs[i][1]))
	}

	// Conclusion.
	closing := articleClosings[tone]
	add(false, h2(closing[0]), p(closing[1]))

	return assemble(blocks)
}

// extraParagraphs lengthen an article that came out short (a terse keyword,
// no client); they are placed before the conclusion.
var extraParagraphs = []string{
	"<p>One more tip: keep notes as you go. Writing down what each option offers, what it costs and how quickly it can start makes the final comparison far easier, and it gives you something concrete to refer back to if questions come up later.</p>",
	"<p>Finally, do not be afraid to ask for references. A provider who is confident in their work will be happy to put you in touch with past customers, and a five-minute conversation with one of them often tells you more than any brochure.</p>",
	"<p>It is also worth thinking about the long term. The cheapest option today is not always the cheapest over several years, so ask about maintenance, support and what happens when your needs change.</p>",
}

// assemble joins the blocks, dropping optional ones while the article is
// too long and adding extra paragraphs while it is too short. Each block's
// words are counted once.
func assemble(blocks []block) string {
	total := 0
	counts := make([]int, len(blocks))
	for i, b := range blocks {
		counts[i] = provider.WordCount(b.html)
		total += counts[i]
	}
	for i := len(blocks) - 1; i >= 0 && total > maxWords; i-- {
		if blocks[i].optional {
			total -= counts[i]
			blocks = append(blocks[:i], blocks[i+1:]...)
			counts = append(counts[:i], counts[i+1:]...)
		}
	}
	conclusion := len(blocks) - 2
	for _, extra := range extraParagraphs {
		if total >= minWords {
			break
		}
		blocks = append(blocks[:conclusion], append([]block{{html: extra}}, blocks[conclusion:]...)...)
		total += provider.WordCount(extra)
		conclusion++
	}
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = b.html
	}
	return strings.Join(parts, "\n")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
