// Command lambdafloor is the size floor of the Lambda bootstraps: the
// smallest function on the product's stack, aws-lambda-go with
// aws-lambda-go-api-proxy's HTTP adapter (API Gateway HTTP API events) and
// a go-redis client (single node or cluster, as OCYPOD_REDIS_CLUSTER says)
// running one script. The benchmark builds it with the Makefile's flags
// next to every function and compares the sizes. It lives under testdata so
// that `go build ./...` leaves it out of the product.
package main

import (
	"log"
	"net/http"
	"os"
	"strconv"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/redis/go-redis/v9"
)

var counter = redis.NewScript(`return redis.call('INCR', KEYS[1])`)

func main() {
	url := os.Getenv("OCYPOD_REDIS_URL")
	var rdb redis.UniversalClient
	if os.Getenv("OCYPOD_REDIS_CLUSTER") == "true" {
		o, err := redis.ParseClusterURL(url)
		if err != nil {
			log.Fatal(err)
		}
		rdb = redis.NewClusterClient(o)
	} else {
		o, err := redis.ParseURL(url)
		if err != nil {
			log.Fatal(err)
		}
		rdb = redis.NewClient(o)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := counter.Run(r.Context(), rdb, []string{"{floor}:n"}).Int64()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(strconv.FormatInt(n, 10)))
	})
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
