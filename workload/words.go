package workload

// words are common English words, each a single token in most BPE
// vocabularies, from which prompts are built. Order matters only for
// determinism: changing it changes every prompt of a given seed.
var words = [...]string{
	"time", "year", "people", "way", "day", "man", "thing", "woman", "life", "child",
	"world", "school", "state", "family", "student", "group", "country", "problem", "hand", "part",
	"place", "case", "week", "company", "system", "program", "question", "work", "government", "number",
	"night", "point", "home", "water", "room", "mother", "area", "money", "story", "fact",
	"month", "lot", "right", "study", "book", "eye", "job", "word", "business", "issue",
	"side", "kind", "head", "house", "service", "friend", "father", "power", "hour", "game",
	"line", "end", "member", "law", "car", "city", "community", "name", "president", "team",
	"minute", "idea", "kid", "body", "information", "back", "parent", "face", "others", "level",
	"office", "door", "health", "person", "art", "war", "history", "party", "result", "change",
	"morning", "reason", "research", "girl", "guy", "moment", "air", "teacher", "force", "education",
	"foot", "boy", "age", "policy", "music", "market", "sense", "nation", "plan", "college",
	"interest", "death", "experience", "effect", "class", "control", "care", "field", "development", "role",
	"effort", "rate", "heart", "drug", "show", "leader", "light", "voice", "wife", "police",
	"mind", "price", "report", "decision", "son", "view", "relationship", "town", "road", "arm",
	"difference", "value", "building", "action", "model", "season", "society", "tax", "director", "position",
	"player", "record", "paper", "space", "ground", "form", "event", "official", "matter", "center",
	"couple", "site", "project", "activity", "star", "table", "need", "court", "oil", "situation",
	"cost", "industry", "figure", "street", "image", "phase", "church", "stage", "summer", "test",
	"river", "garden", "window", "apple", "orange", "forest", "island", "bridge", "engine", "planet",
	"ocean", "winter", "spring", "autumn", "silver", "golden", "copper", "marble", "stone", "glass",
	"cotton", "silk", "wool", "leather", "timber", "sugar", "salt", "pepper", "bread", "cheese",
	"butter", "coffee", "honey", "lemon", "mountain", "valley", "desert", "meadow", "harbor", "castle",
	"village", "tower", "temple", "palace", "station", "airport", "library", "museum", "theater", "stadium",
	"factory", "kitchen", "bedroom", "cellar", "attic", "balcony", "corridor", "ladder", "mirror", "candle",
	"lantern", "basket", "bottle", "bucket", "hammer", "needle", "pencil", "rocket", "signal", "button",
	"circle", "square", "triangle", "letter", "song", "poem", "novel", "chapter", "border", "journey",
	"travel", "dinner", "lunch", "breakfast", "doctor", "nurse", "farmer", "sailor", "soldier", "painter",
	"singer", "dancer", "writer", "baker", "hunter", "driver", "pilot", "captain", "king", "queen",
	"prince", "knight", "dragon", "tiger", "lion", "horse", "rabbit", "eagle", "falcon", "salmon",
	"turtle", "spider", "monkey", "donkey", "camel", "zebra", "whale", "dolphin", "shark", "penguin",
	"parrot", "pigeon", "sparrow", "beetle", "cricket",
}
