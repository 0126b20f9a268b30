package textsearch

// Default is the language of a collection that names none: PostgreSQL's
// simple configuration, which lower-cases words and neither stems them
// nor drops stop words.
const Default = "simple"

// Languages are the search languages a collection may set: the text
// search configurations PostgreSQL ships with, Default first.
var Languages = []string{Default, "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english",
	"finnish", "french", "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian",
	"nepali", "norwegian", "portuguese", "romanian", "russian", "serbian", "spanish", "swedish", "tamil", "turkish", "yiddish"}
