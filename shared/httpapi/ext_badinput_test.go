package httpapi

import (
	"strings"
	"testing"
)

// extBadInputs are requests using the extension wrongly: each must be
// refused with its 400 before the store is touched. "{job}" in a path is a
// running job's id.
func extBadInputs() []badInput {
	const (
		prio     = "Invalid priority: must be an integer from -1000000 to 1000000"
		rfc3339  = `must be an RFC 3339 time such as "2024-03-01T10:00:00Z"`
		durStr   = `must be a duration string such as "30s"`
		keyWhy   = "Invalid key: must be 1 to 256 printable characters"
		deps     = "Invalid depends_on: must be an array of at most 100 job ids"
		backoff  = `Invalid retry_backoff: must be an object {"min": duration, "max": duration, "factor": number, "jitter": bool}`
		count    = "Invalid count: must be an integer from 1 to 100"
		worker   = "Invalid worker: must be 1 to 128 printable characters"
		limit    = "Invalid limit: must be an integer from 1 to 1000"
		attempt  = "Invalid attempt: must be a non-negative integer"
		rateWhy  = `Invalid rate_limit: must be an object {"per_second": number above 0, "burst": integer of at least 1}`
		statuses = "Invalid status: must be one of queued, running, failed, completed, cancelled, timed_out, scheduled, waiting"
		date     = "Invalid date: must be a day as YYYY-MM-DD"
	)
	create := func(name, body, text string) badInput {
		return badInput{name: "create: " + name, method: "POST", path: "/queue/q/job", body: body, status: 400, text: text}
	}
	patch := func(name, body, text string) badInput {
		return badInput{name: "patch: " + name, method: "PATCH", path: "/job/{job}", body: body, status: 400, text: text}
	}
	get := func(name, path, text string) badInput {
		return badInput{name: name, method: "GET", path: path, status: 400, text: text}
	}
	patchQueue := func(name, body, text string) badInput {
		return badInput{name: "patch queue: " + name, method: "PATCH", path: "/queue/q", body: body, status: 400, text: text}
	}
	schedule := func(name, body, text string) badInput {
		return badInput{name: "schedule: " + name, method: "PUT", path: "/queue/q/schedules/s", body: body, status: 400, text: text}
	}
	batch := func(name, body, text string) badInput {
		return badInput{name: "batch: " + name, method: "PATCH", path: "/jobs", body: body, status: 400, text: text}
	}
	const batchShape = "Invalid jobs: expected an array of 1 to 1000 items"
	batchItem := func(i int) string { return "Invalid jobs[" + itoa(i) + `]: expected an object with an integer "id"` }
	tags65 := `["` + strings.Repeat(`t","`, 64) + `t"]`
	ids101 := "["
	for i := 1; i <= 101; i++ {
		ids101 += itoa(i) + map[bool]string{true: "]", false: ","}[i == 101]
	}
	queues101 := strings.Repeat("q,", 100) + "q101"
	for i := 0; i < 100; i++ {
		queues101 = strings.Replace(queues101, "q,", "q"+itoa(i)+"x,", 1)
	}
	return []badInput{
		// Unknown input, refused wherever the request uses the extensions.
		create("a misspelt extension field", `{"priority":5,"delya":"1m"}`, "Unknown field: delya"),
		create("an unknown key next to an extension field", `{"input":1,"tracked":true,"x":null}`, "Unknown field: x"),
		create("an unknown backoff key", `{"retry_backoff":{"min":"1s","mx":"1m"}}`, "Unknown field: retry_backoff.mx"),
		{name: "create: an extension parameter misspelt", method: "POST", path: "/queue/q/job?x=1", body: `{"priority":1}`,
			status: 400, text: "Unknown parameter: x"},
		{name: "batch: a misspelt field", method: "POST", path: "/queue/q/jobs", body: `[{"input":1},{"input":2,"priorty":1}]`,
			status: 400, text: "Invalid jobs[1]: Unknown field: priorty"},
		patch("an unknown error key", `{"status":"failed","error":{"grp":"io"}}`, "Unknown field: error.grp"),
		patch("an unknown key of next", `{"status":"completed","next":{"queue":"q","inptu":1}}`, "Invalid next: Unknown field: inptu"),
		patch("a misspelt key next to an extension field", `{"status":"failed","retyr":false,"retry":false}`, "Unknown field: retyr"),
		{name: "patch: an unknown parameter with attempt", method: "PATCH", path: "/job/{job}?attempt=1&tkae=q",
			body: `{"status":"completed"}`, status: 400, text: "Unknown parameter: tkae"},
		patchQueue("a misspelt setting", `{"pasued":true}`, "Unknown field: pasued"),
		patchQueue("an unknown rate_limit key", `{"rate_limit":{"per_second":1,"brust":2}}`, "Unknown field: rate_limit.brust"),
		schedule("an unknown key", `{"every":"1m","job":{},"cronn":"x"}`, "Unknown field: cronn"),
		schedule("an unknown job key", `{"every":"1m","job":{"input":1,"x":1}}`, "Invalid job: Unknown field: x"),
		get("a misspelt listing parameter", "/jobs?limt=5", "Unknown parameter: limt"),
		get("an unknown take parameter", "/queue/q/job?wait=1s&wiat=2s", "Unknown parameter: wiat"),
		get("an unknown parameter of a multi-queue take", "/job?queues=q&x", "Unknown parameter: x"),
		{name: "retry: an unknown key", method: "POST", path: "/job/{job}/retry", body: `{"dealy":"1m"}`, status: 400, text: "Unknown field: dealy"},
		// Malformed batches of updates and heartbeats: nothing is applied.
		batch("not an array", `{"id":1,"status":"completed"}`, batchShape),
		batch("no items", `[]`, batchShape),
		batch("too many items", "["+strings.Repeat(`{"id":1,"status":"completed"},`, 1000)+`{"id":1}]`, "Invalid jobs: at most 1000 items per batch"),
		batch("an item not an object", `[{"id":1,"status":"completed"},2]`, batchItem(1)),
		batch("an item without id", `[{"id":1,"status":"completed"},{"status":"completed"}]`, batchItem(1)),
		batch("a string id", `[{"id":"1","status":"completed"}]`, batchItem(0)),
		batch("a float id", `[{"id":1.0,"status":"completed"}]`, batchItem(0)),
		batch("a negative id", `[{"id":-1,"status":"completed"}]`, batchItem(0)),
		batch("two ids", `[{"id":1,"id":2,"status":"completed"}]`, batchItem(0)),
		{name: "batch: an unknown parameter", method: "PATCH", path: "/jobs?take=q&cuont=1", body: `[{"id":1,"status":"completed"}]`,
			status: 400, text: "Unknown parameter: cuont"},
		{name: "batch: count without take", method: "PATCH", path: "/jobs?count=2", body: `[{"id":1,"status":"completed"}]`,
			status: 400, text: "Invalid count: only with take"},
		{name: "batch: a bad take queue", method: "PATCH", path: "/jobs?take=a%2Fb", body: `[{"id":1,"status":"completed"}]`,
			status: 400, text: invalidName},
		{name: "batch: a bad take count", method: "PATCH", path: "/jobs?take=q&count=0", body: `[{"id":1,"status":"completed"}]`,
			status: 400, text: count},
		{name: "batch heartbeat: not an array", method: "POST", path: "/jobs/heartbeat", body: `{"id":1}`, status: 400, text: batchShape},
		{name: "batch heartbeat: an item without id", method: "POST", path: "/jobs/heartbeat", body: `[{"id":1},{"attempt":1}]`,
			status: 400, text: batchItem(1)},
		{name: "batch heartbeat: a parameter", method: "POST", path: "/jobs/heartbeat?attempt=1", body: `[{"id":1}]`,
			status: 400, text: "Unknown parameter: attempt"},
		// Create fields.
		create("priority string", `{"priority":"high"}`, prio),
		create("priority float", `{"priority":1.5}`, prio),
		create("priority exponent", `{"priority":1e3}`, prio),
		create("priority too high", `{"priority":1000001}`, prio),
		create("priority too low", `{"priority":-1000001}`, prio),
		create("priority bool", `{"priority":true}`, prio),
		create("priority huge", `{"priority":99999999999999999999}`, prio),
		create("run_at words", `{"run_at":"tomorrow"}`, "Invalid run_at: "+rfc3339),
		create("run_at number", `{"run_at":1709287200}`, "Invalid run_at: "+rfc3339),
		create("run_at no offset", `{"run_at":"2024-03-01T10:00:00"}`, "Invalid run_at: "+rfc3339),
		create("delay number", `{"delay":30}`, "Invalid delay: "+durStr),
		create("delay negative", `{"delay":"-1s"}`, "Invalid delay: must not be negative"),
		create("run_at and delay", `{"run_at":"2030-01-01T00:00:00Z","delay":"1s"}`, "Invalid run_at: give run_at or delay, not both"),
		create("empty key", `{"key":""}`, keyWhy),
		create("long key", `{"key":"`+strings.Repeat("é", 257)+`"}`, keyWhy),
		create("control key", `{"key":"a\nb"}`, keyWhy),
		create("number key", `{"key":5}`, keyWhy),
		create("unknown on_conflict", `{"key":"k","on_conflict":"replace"}`, `Invalid on_conflict: must be one of "keep", "update", "error"`),
		create("on_conflict without key", `{"on_conflict":"keep"}`, "Invalid on_conflict: needs a key"),
		create("unknown update_run_at", `{"key":"k","on_conflict":"update","update_run_at":"sometimes"}`,
			`Invalid update_run_at: must be one of "always", "if_later", "if_earlier", "never"`),
		create("update_run_at without update", `{"key":"k","update_run_at":"never"}`, `Invalid update_run_at: needs on_conflict "update"`),
		create("depends_on string", `{"depends_on":"1"}`, deps),
		create("depends_on float", `{"depends_on":[1.5]}`, deps),
		create("depends_on negative", `{"depends_on":[-1]}`, deps),
		create("depends_on 101", `{"depends_on":`+ids101+`}`, deps),
		create("backoff string", `{"retry_backoff":"1s"}`, backoff),
		create("backoff without max", `{"retry_backoff":{"min":"1s"}}`, "Invalid retry_backoff: needs min and max"),
		create("backoff min 0", `{"retry_backoff":{"min":"500ms","max":"1s"}}`, "Invalid retry_backoff: min must be at least 1s"),
		create("backoff max below min", `{"retry_backoff":{"min":"2s","max":"1s"}}`, "Invalid retry_backoff: max must be at least min"),
		create("backoff factor below 1", `{"retry_backoff":{"min":"1s","max":"2s","factor":0.5}}`, "Invalid retry_backoff: factor must be a number of at least 1"),
		create("backoff factor string", `{"retry_backoff":{"min":"1s","max":"2s","factor":"2"}}`, "Invalid retry_backoff: factor must be a number of at least 1"),
		create("backoff jitter string", `{"retry_backoff":{"min":"1s","max":"2s","jitter":"yes"}}`, "Invalid retry_backoff.jitter: must be true or false"),
		create("backoff min number", `{"retry_backoff":{"min":5,"max":"2s"}}`, "Invalid retry_backoff.min: "+durStr),
		create("backoff and delays", `{"retry_delays":["1s"],"retry_backoff":{"min":"1s","max":"2s"}}`,
			"Invalid retry_backoff: give retry_delays or retry_backoff, not both"),
		create("timeout_retries negative", `{"timeout_retries":-1}`, "Invalid timeout_retries: must be a non-negative integer"),
		create("timeout_retries string", `{"timeout_retries":"2"}`, "Invalid timeout_retries: must be a non-negative integer"),
		create("tracked string", `{"tracked":"yes"}`, "Invalid tracked: must be true or false"),
		create("65 tags", `{"tags":`+tags65+`}`, "Invalid tags: at most 64 tags per job"),
		create("duplicate priority", `{"priority":1,"priority":2}`, jsonErr+"duplicate field `priority` at line 1 column 25"),
		// PATCH fields and the statuses they need.
		patch("error without failed", `{"status":"completed","error":{"group":"g"}}`, "Invalid error: only with status failed or timed_out"),
		patch("error without status", `{"error":{"message":"m"}}`, "Invalid error: only with status failed or timed_out"),
		patch("error string", `{"status":"failed","error":"boom"}`, `Invalid error: must be an object {"group": string, "message": string}`),
		patch("empty group", `{"status":"failed","error":{"group":""}}`, "Invalid error.group: must be 1 to 128 printable characters"),
		patch("long group", `{"status":"failed","error":{"group":"`+strings.Repeat("g", 129)+`"}}`, "Invalid error.group: must be 1 to 128 printable characters"),
		patch("message number", `{"status":"failed","error":{"message":5}}`, "Invalid error.message: must be a string of at most 64 KiB"),
		patch("retry string", `{"status":"failed","retry":"no"}`, "Invalid retry: must be true or false"),
		patch("retry without failed", `{"status":"completed","retry":false}`, "Invalid retry: only with status failed"),
		patch("retry_at without failed", `{"status":"timed_out","retry_at":"2030-01-01T00:00:00Z"}`, "Invalid retry_at: only with status failed"),
		patch("retry_in without status", `{"retry_in":"1s"}`, "Invalid retry_in: only with status failed"),
		patch("retry_at and retry_in", `{"status":"failed","retry_at":"2030-01-01T00:00:00Z","retry_in":"1s"}`, "Invalid retry_at: give retry_at or retry_in, not both"),
		patch("retry_in words", `{"status":"failed","retry_in":"soon"}`, "Invalid retry_in: expected number at 0"),
		patch("retry false with retry_in", `{"status":"failed","retry":false,"retry_in":"1s"}`, "Invalid retry: false leaves no retry to schedule"),
		patch("next without completed", `{"status":"failed","next":{"queue":"q"}}`, "Invalid next: only with status completed"),
		patch("next string", `{"status":"completed","next":"q"}`, `Invalid next: must be a job body with a "queue"`),
		patch("next without queue", `{"status":"completed","next":{"input":1}}`, `Invalid next: needs a "queue"`),
		patch("next bad queue", `{"status":"completed","next":{"queue":"a/b"}}`, invalidName),
		patch("next bad field", `{"status":"completed","next":{"queue":"q","priority":"x"}}`, "Invalid next: "+prio),
		patch("next 65 tags", `{"status":"completed","next":{"queue":"q","tags":`+tags65+`}}`, "Invalid next: Invalid tags: at most 64 tags per job"),
		patch("status scheduled", `{"status":"scheduled"}`, jsonErr+"unknown variant `scheduled`, "+variants+" at line 1 column 22"),
		patch("status waiting", `{"status":"waiting"}`, jsonErr+"unknown variant `waiting`, "+variants+" at line 1 column 20"),
		patch("priority with status", `{"status":"cancelled","priority":1}`, "Invalid priority: changes a pending job; not with status"),
		patch("depends_on with status", `{"status":"cancelled","depends_on":[]}`, "Invalid depends_on: changes a pending job; not with status"),
		patch("run_at and delay", `{"run_at":"2030-01-01T00:00:00Z","delay":"1s"}`, "Invalid run_at: give run_at or delay, not both"),
		patch("priority too high", `{"priority":2000000}`, prio),
		patch("depends_on string", `{"depends_on":"x"}`, deps),
		patch("empty tag", `{"tags":["a",""]}`, "tags cannot be empty"),
		patch("65 tags", `{"tags":`+tags65+`}`, "Invalid tags: at most 64 tags per job"),
		patch("tracked number", `{"tracked":1}`, "Invalid tracked: must be true or false"),
		// Query parameters of the job routes.
		{name: "attempt word", method: "PATCH", path: "/job/{job}?attempt=x", body: `{}`, status: 400, text: attempt},
		{name: "attempt negative", method: "PUT", path: "/job/{job}/heartbeat?attempt=-1", status: 400, text: attempt},
		{name: "attempt plus", method: "PUT", path: "/job/{job}/output?attempt=%2B1", body: `1`, status: 400, text: attempt},
		{name: "attempt empty", method: "PUT", path: "/job/{job}/output?attempt=", body: `1`, status: 400, text: attempt},
		{name: "attempt twice", method: "PATCH", path: "/job/{job}?attempt=1&attempt=1", body: `{}`, status: 400, text: "Query deserialize error: duplicate field `attempt`"},
		{name: "count without take", method: "PATCH", path: "/job/{job}?count=2", body: `{}`, status: 400, text: "Invalid count: only with take"},
		{name: "worker without take", method: "PATCH", path: "/job/{job}?worker=w", body: `{}`, status: 400, text: "Invalid worker: only with take"},
		{name: "wait without take", method: "PATCH", path: "/job/{job}?wait=1s", body: `{}`, status: 400, text: "Invalid wait: only with take"},
		{name: "take bad queue", method: "PATCH", path: "/job/{job}?take=a%2Fb", body: `{}`, status: 400, text: invalidName},
		{name: "take count 0", method: "PATCH", path: "/job/{job}?take=q&count=0", body: `{}`, status: 400, text: count},
		{name: "take wait 21s", method: "PATCH", path: "/job/{job}?take=q&wait=21s", body: `{}`, status: 400, text: "Invalid wait: must be at most 20s"},
		{name: "retry run_at words", method: "POST", path: "/job/{job}/retry", body: `{"run_at":"x"}`, status: 400, text: "Invalid run_at: " + rfc3339},
		{name: "retry run_at and delay", method: "POST", path: "/job/{job}/retry", body: `{"run_at":"2030-01-01T00:00:00Z","delay":"1s"}`, status: 400,
			text: "Invalid run_at: give run_at or delay, not both"},
		{name: "retry delay number", method: "POST", path: "/job/{job}/retry", body: `{"delay":5}`, status: 400, text: "Invalid delay: " + durStr},
		{name: "retry body not JSON", method: "POST", path: "/job/{job}/retry", contentType: "text/plain", body: `{}`, status: 400, text: "Content type error"},
		// Waits for a job's end (GET) and run and wait (POST): refused
		// before anything is created.
		{name: "job wait 21s", method: "GET", path: "/job/{job}?wait=21s", status: 400, text: "Invalid wait: must be at most 20s"},
		{name: "job wait word", method: "GET", path: "/job/{job}?wait=abc", status: 400, text: "Invalid wait: expected number at 0"},
		{name: "job wait unknown parameter", method: "GET", path: "/job/{job}?wait=1s&pretty", status: 400, text: "Unknown parameter: pretty"},
		{name: "create wait 21s", method: "POST", path: "/queue/q/job?wait=21s", body: `{}`, status: 400, text: "Invalid wait: must be at most 20s"},
		{name: "create wait word", method: "POST", path: "/queue/q/job?wait=abc", body: `{}`, status: 400, text: "Invalid wait: expected number at 0"},
		{name: "create wait twice", method: "POST", path: "/queue/q/job?wait=1s&wait=1s", body: `{}`, status: 400, text: "Query deserialize error: duplicate field `wait`"},
		{name: "create fields without wait", method: "POST", path: "/queue/q/job?fields=id", body: `{}`, status: 400, text: "Invalid fields: only with wait"},
		{name: "create wait unknown field", method: "POST", path: "/queue/q/job?wait=1s&fields=nope", body: `{}`, status: 400, text: "Unrecognised field: nope"},
		// Takes.
		get("wait 21s", "/queue/q/job?wait=21s", "Invalid wait: must be at most 20s"),
		get("wait 20001ms", "/queue/q/job?wait=20001ms", "Invalid wait: must be at most 20s"),
		get("wait huge", "/queue/q/job?wait=99999999999999999999s", "Invalid wait: number is too large"),
		get("wait unit", "/queue/q/job?wait=5parsecs", `Invalid wait: unknown time unit "parsecs", supported units: ns, us, ms, sec, min, hours, days, weeks, months, years (and few variations)`),
		get("wait word", "/queue/q/job?wait=abc", "Invalid wait: expected number at 0"),
		get("wait twice", "/queue/q/job?wait=1s&wait=1s", "Query deserialize error: duplicate field `wait`"),
		get("count 0", "/queue/q/job?count=0", count),
		get("count 101", "/queue/q/job?count=101", count),
		get("count float", "/queue/q/job?count=1.5", count),
		get("count plus", "/queue/q/job?count=+1", count),
		get("count empty", "/queue/q/job?count=", count),
		get("worker empty", "/queue/q/job?worker=", worker),
		get("worker long", "/queue/q/job?worker="+strings.Repeat("w", 129), worker),
		get("worker control", "/queue/q/job?worker=a%0Ab", worker),
		get("no queues", "/job", "Invalid queues: give at least one queue"),
		get("empty queues", "/job?queues=", "Invalid queues: give at least one queue"),
		get("bad queue in list", "/job?queues=q,a%2Fb", invalidName),
		get("empty queue in list", "/job?queues=q,,q", invalidName),
		get("101 queues", "/job?queues="+queues101, "Invalid queues: at most 100 queues"),
		get("unknown order", "/job?queues=q&order=random", `Invalid order: must be "ordered" or "round_robin"`),
		get("take many count", "/job?queues=q&count=0", count),
		// Listing, failures, workers, stats.
		get("list status", "/jobs?status=done", statuses),
		get("list two statuses", "/jobs?status=queued,running", "Invalid status: give one status"),
		get("list limit 0", "/jobs?limit=0", limit),
		get("list limit 1001", "/queue/q/jobs?limit=1001", limit),
		get("list limit word", "/jobs?limit=ten", limit),
		get("list tracked", "/jobs?tracked=yes", "Invalid tracked: must be true or false"),
		get("list empty tag", "/jobs?tag=", "Invalid tag: must be 1 to 1024 printable characters"),
		get("list empty key", "/queue/q/jobs?key=", "Invalid key: must be 1 to 256 printable characters"),
		get("list empty worker", "/jobs?worker=", worker),
		get("list fields", "/jobs?fields=id,nope", "Unrecognised field: nope"),
		get("list fields twice", "/jobs?fields=id&fields=id", "Query deserialize error: duplicate field `fields`"),
		get("list bad queue", "/queue/a%2Fb/jobs", invalidName),
		get("failures limit", "/failures/g?limit=0", limit),
		{name: "retry failures limit", method: "POST", path: "/failures/g/retry?limit=1001", status: 400, text: limit},
		{name: "retry failures queue", method: "POST", path: "/failures/g/retry", body: `{"queue":"a/b"}`, status: 400, text: invalidName},
		{name: "retry failures queue number", method: "POST", path: "/failures/g/retry", body: `{"queue":5}`, status: 400, text: "Invalid queue: must be a queue name"},
		{name: "retry failures not JSON", method: "POST", path: "/failures/g/retry", contentType: "text/plain", body: `{}`, status: 400, text: "Content type error"},
		get("worker name", "/workers/a%0Ab", worker),
		get("stats month 13", "/queue/q/stats?date=2024-13-01", date),
		get("stats short", "/queue/q/stats?date=2024-3-1", date),
		get("stats word", "/queue/q/stats?date=yesterday", date),
		get("stats Feb 30", "/queue/q/stats?date=2024-02-30", date),
		// Queue settings.
		patchQueue("paused string", `{"paused":"yes"}`, "Invalid paused: must be true or false"),
		patchQueue("concurrency negative", `{"concurrency":-1}`, "Invalid concurrency: must be a non-negative integer"),
		patchQueue("rate zero", `{"rate_limit":{"per_second":0,"burst":1}}`, rateWhy),
		patchQueue("rate without burst", `{"rate_limit":{"per_second":1}}`, rateWhy),
		patchQueue("rate burst 0", `{"rate_limit":{"per_second":1,"burst":0}}`, rateWhy),
		patchQueue("rate number", `{"rate_limit":5}`, rateWhy),
		patchQueue("backoff and delays", `{"retry_delays":["1s"],"retry_backoff":{"min":"1s","max":"2s"}}`,
			"Invalid retry_backoff: give retry_delays or retry_backoff, not both"),
		patchQueue("timeout_retries string", `{"timeout_retries":"x"}`, "Invalid timeout_retries: must be a non-negative integer"),
		patchQueue("dead letter itself", `{"dead_letter_queue":"q"}`, "Invalid dead_letter_queue: cannot be the queue itself"),
		patchQueue("dead letter bad name", `{"dead_letter_queue":"a/b"}`, invalidName),
		patchQueue("shards 0", `{"shards":0}`, "Invalid shards: must be an integer from 1 to 1024"),
		patchQueue("timeout number", `{"timeout":5}`, jsonErr+"invalid type: integer `5`, expected a duration string at line 1 column 13"),
		patchQueue("retries null", `{"retries":null}`, jsonErr+"invalid type: null, expected u64 at line 1 column 16"),
		{name: "patch queue bad name", method: "PATCH", path: "/queue/a%2Fb", body: `{}`, status: 400, text: invalidName},
		// Schedules.
		schedule("neither", `{"job":{}}`, "Invalid schedule: give cron or every"),
		schedule("both", `{"cron":"* * * * *","every":"1m","job":{}}`, "Invalid schedule: give cron or every, not both"),
		schedule("bad cron", `{"cron":"* * *","job":{}}`, "Invalid cron: expected exactly 5 fields, found 3: [* * *]"),
		schedule("never fires", `{"cron":"0 0 30 2 *","job":{}}`, "Invalid cron: 0 0 30 2 * never fires"),
		schedule("cron number", `{"cron":5,"job":{}}`, "Invalid cron: must be a 5-field cron expression"),
		schedule("every 500ms", `{"every":"500ms","job":{}}`, "Invalid every: must be at least 1s"),
		schedule("every number", `{"every":60,"job":{}}`, "Invalid every: "+durStr),
		schedule("no job", `{"every":"1m"}`, "Invalid job: give the body of the jobs to create"),
		schedule("job array", `{"every":"1m","job":[]}`, "Invalid job: must be a job body (an object)"),
		schedule("job bad field", `{"every":"1m","job":{"priority":"x"}}`, "Invalid job: "+prio),
		schedule("job delay", `{"every":"1m","job":{"delay":"1s"}}`, "Invalid job: a schedule's job cannot have run_at or delay"),
		schedule("job 65 tags", `{"every":"1m","job":{"tags":`+tags65+`}}`, "Invalid job: Invalid tags: at most 64 tags per job"),
		{name: "schedule long id", method: "GET", path: "/queue/q/schedules/" + strings.Repeat("s", 65), status: 400,
			text: "Invalid schedule id: must be 1 to 64 characters of a-zA-Z0-9_.-"},
		{name: "schedule bad id", method: "DELETE", path: "/queue/q/schedules/a%2Fb", status: 400,
			text: "Invalid schedule id: must be 1 to 64 characters of a-zA-Z0-9_.-"},
		{name: "schedule bad queue", method: "GET", path: "/queue/a%2Fb/schedules", status: 400, text: invalidName},
	}
}

func TestExtBadInputNeverReachesStore(t *testing.T) {
	t.Parallel()
	for _, tt := range extBadInputs() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := &fakeStore{}
			h := New(store, Options{}).Handler()
			wantText(t, serve(h, tt.request("1")), tt.status, tt.text)
			if calls := store.Calls(); len(calls) != 0 {
				t.Errorf("store calls = %v, want none", calls)
			}
		})
	}
}

// TestExtBadInputWritesNothing runs every bad extension input against the
// real store: the same answers, and Redis does not change.
func TestExtBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{"retries":1}`)
	env.seedJob(t, "q", `{"input":{"k":"v"},"tags":["t"]}`)
	env.seedJob(t, "q", `{}`)
	env.take(t, "q")
	before := env.snapshot(t)
	for _, tt := range extBadInputs() {
		wantTextNamed(t, tt.name, serve(env.h, tt.request("1")), tt.status, tt.text)
	}
	// Refusals the store decides: they change nothing either.
	for _, tt := range []badInput{
		{name: "unknown dependency", method: "POST", path: "/queue/q/job", body: `{"depends_on":[1,99]}`, status: 400,
			text: "Invalid depends_on: job 99 does not exist"},
		{name: "batch with an unknown dependency", method: "POST", path: "/queue/q/jobs", body: `[{},{"depends_on":[98]}]`, status: 400,
			text: "Invalid depends_on: job 98 does not exist"},
		{name: "more shards than partitions", method: "PATCH", path: "/queue/q", body: `{"shards":2}`, status: 400,
			text: "Invalid shards: must be 1 to partitions (1)"},
		{name: "depend on itself", method: "PATCH", path: "/job/2", body: `{"depends_on":[2]}`, status: 400,
			text: "Invalid depends_on: a job cannot depend on itself"},
		{name: "bad cursor", method: "GET", path: "/jobs?cursor=x", status: 400, text: "Invalid cursor: not a cursor of this server"},
	} {
		wantTextNamed(t, tt.name, serve(env.h, tt.request("1")), tt.status, tt.text)
	}
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Errorf("Redis changed after refused requests:\nbefore %q\nafter  %q", before, after)
	}
}
