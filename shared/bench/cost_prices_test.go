package bench_test

// The unit prices of the cost model (make cost, docs/cost.md): one table,
// each price with its source and the date it was read. "3P" marks a third
// party's transcription of a provider's price, "unverified" a figure not
// read on the provider's own page. Change a price here and rerun make cost.

// price is one unit price.
type price struct {
	key    string
	item   string
	value  float64
	unit   string
	source string
	date   string
}

const pricesDate = "2026-11"

var prices = []price{
	{"apigw", "API Gateway HTTP API, requests (first 300 M a month)", 1.00, "$ per M requests",
		"AWS whitepaper \"Best Practices for Designing API Gateway Private APIs\" (cost optimization); aws.amazon.com/api-gateway/pricing", pricesDate},
	{"apigw300", "API Gateway HTTP API, requests over 300 M a month", 0.90, "$ per M requests", "same", pricesDate},
	{"albHour", "Application Load Balancer, us-east-1", 0.0225, "$ per hour", "aws.amazon.com/elasticloadbalancing/pricing", pricesDate},
	{"lcuHour", "Application Load Balancer LCU, us-east-1", 0.008, "$ per LCU-hour",
		"aws.amazon.com/elasticloadbalancing/pricing (LCU: 25 new connections/s, 3,000 active connections/min, 1 GB/h processed (0.4 GB/h for Lambda targets), 1,000 rule evaluations/s beyond 10 free rules)", pricesDate},
	{"lambdaReq", "Lambda requests", 0.20, "$ per M requests", "api-evangelist/aws-lambda plans, transcribed from aws.amazon.com/lambda/pricing (3P)", pricesDate},
	{"lambdaGBs", "Lambda duration, arm64", 0.0000133334, "$ per GB-second", "artillery prices.js (3P), aws.amazon.com/lambda/pricing", pricesDate},
	{"ecpu", "ElastiCache Serverless Valkey, ECPU", 0.0023, "$ per M ECPU", "usage.ai citing AWS (3P)", pricesDate},
	{"gbHour", "ElastiCache Serverless Valkey, data stored (100 MB minimum)", 0.084, "$ per GB-hour", "usage.ai (3P); minimum: cur.vantage.sh, aws.amazon.com/elasticache/pricing", pricesDate},
	{"t4gSmall", "ElastiCache node cache.t4g.small, Valkey, on demand, us-east-1", 0.0256, "$ per node-hour",
		"unverified: $0.032 (Redis OSS list price as remembered from the AWS price list) less the 20% AWS states for Valkey nodes", pricesDate},
	{"metrics", "CloudWatch custom metrics of the sweepers (11)", 3.30, "$ per month", "docs/operations.md, \"What an idle deployment costs\"", pricesDate},
	{"sweepers", "Sweeper invocations (5 x 43,800 a month) and their duration", 0.05, "$ per month", "docs/operations.md, \"What an idle deployment costs\" ($0.044 requests, under $0.01 duration)", pricesDate},
	{"sqs", "SQS standard requests (64 KB chunks)", 0.40, "$ per M requests", "aws.amazon.com/sqs/features (64 KB rule); cloudburn.io, factualminds.com (3P)", pricesDate},
	{"cloudTasks", "Cloud Tasks billable operations (API call or push attempt, 32 KB chunks)", 0.40, "$ per M operations", "cloud.google.com/tasks/pricing", pricesDate},
	{"qstash", "QStash pay as you go (every delivery and callback is a message)", 10.00, "$ per M messages", "upstash.com/pricing/qstash via api-evangelist and finops (3P)", pricesDate},
}

// priceOf returns the price named key.
func priceOf(key string) float64 {
	for _, p := range prices {
		if p.key == key {
			return p.value
		}
	}
	panic("cost: no price " + key)
}
