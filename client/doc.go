// Package client calls an ocyless server (or any server of Ocypod 0.8's
// API with ocyless's extensions) from Go: one typed method per route of
// the server's route table, with durations as time.Duration, times as
// time.Time and job input and output as JSON. Package worker, below it,
// runs handlers on the jobs of one or more queues.
//
//	c, err := client.New("http://127.0.0.1:8023")
//	_, err = c.PutQueue(ctx, "emails", client.QueueSpec{Timeout: new(10 * time.Minute)})
//	created, err := c.CreateJob(ctx, "emails", client.JobSpec{Input: map[string]string{"to": "a@example.com"}})
//	job, err := c.TakeOne(ctx, "emails", client.TakeOptions{Worker: "mailer-1", Wait: 20 * time.Second})
//	err = c.Complete(ctx, job.ID, job.Attempt, map[string]bool{"sent": true})
//
// CreateAndWait runs a job and waits for its result (up to MaxWait);
// WaitJob waits for an existing job to end for good.
//
// # Errors
//
// A request the server refuses is an *Error carrying the HTTP status and
// the server's message. errors.Is matches it against ErrNotFound (404),
// ErrConflict (409), ErrBadRequest (400), ErrUnavailable (503, and the 502,
// 504 and 429 of a gateway), ErrTooLarge, ErrStorageFull, ErrForbidden,
// and ErrStaleAttempt (the 409 of a fenced call whose attempt is no longer
// the job's). IsNotFound, IsConflict, IsUnavailable and IsBadRequest are
// shorthands.
//
// # Retries
//
// A call is sent again, after a jittered exponential backoff (WithRetries;
// by default 3 times from 100ms), only when that is safe:
//
//   - after a 429, whatever the call: a gateway's throttle refuses a
//     request before anything runs;
//   - after a 502, 503 or 504, or a connection that failed, only for the
//     calls that repeating cannot change further: reads (every GET that
//     is not a take), PUT of a queue, a schedule, a heartbeat or an
//     output, and PATCH of a queue.
//
// Creates, takes, job updates, deletes and retries are not sent again: a 503 may have been applied (the server answers 503 when its
// time is up, which can be after Redis ran the request). A take that
// answered 503, or whose context ended mid-request, may have handed a job
// to nobody; that job stays running until its timeout or heartbeat_timeout
// and is then retried by its policy, so give queues retries and a
// heartbeat_timeout. A status change that was applied answers ErrConflict
// when repeated.
//
// # Authentication
//
// An API deployed with ApiAuth=AWS_IAM (the default of the SAM template)
// refuses unsigned requests with 403. Plug a RoundTripper that signs each
// request with AWS Signature Version 4 for the execute-api service; the
// client sets Request.GetBody, so the signer can hash a body without
// consuming it. With aws-sdk-go-v2 (its aws/signer/v4 package and a
// credentials provider such as the one config.LoadDefaultConfig gives):
//
//	type sigv4 struct {
//		next   http.RoundTripper
//		signer *v4.Signer
//		creds  aws.CredentialsProvider
//		region string
//	}
//
//	func (s *sigv4) RoundTrip(r *http.Request) (*http.Response, error) {
//		r = r.Clone(r.Context())
//		payload := sha256.New()
//		if r.GetBody != nil {
//			body, err := r.GetBody()
//			if err != nil {
//				return nil, err
//			}
//			_, _ = io.Copy(payload, body)
//		}
//		creds, err := s.creds.Retrieve(r.Context())
//		if err != nil {
//			return nil, err
//		}
//		err = s.signer.SignHTTP(r.Context(), creds, r, hex.EncodeToString(payload.Sum(nil)),
//			"execute-api", s.region, time.Now())
//		if err != nil {
//			return nil, err
//		}
//		return s.next.RoundTrip(r)
//	}
//
//	c, err := client.New(apiURL, client.WithTransport(&sigv4{next: http.DefaultTransport,
//		signer: v4.NewSigner(), creds: cfg.Credentials, region: cfg.Region}))
//
// A RoundTripper is also the place for other headers a proxy in front of
// the API wants. The client itself sends Content-Type, Accept and
// User-Agent only.
package client
