package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/platform/natstest"
)

// BenchmarkCRMListProspects measures GET /api/v1/prospects?limit=50 through
// the whole stack (HTTP, key cache, gateway, gRPC, store) with concurrent
// clients, on each store. The agency has 1,000 prospects; 4 other agencies
// hold 1,000 each.
func BenchmarkCRMListProspects(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchList(b, startStack(b)) })
	b.Run("postgres", func(b *testing.B) {
		benchList(b, startStack(b, "--database-url="+migratedDatabase(b), "--nats-url="+natstest.URL(b)))
	})
}

func benchList(b *testing.B, s *stack) {
	var target tenant
	for i := range 5 {
		tn := s.newTenant(b)
		if i == 0 {
			target = tn
		}
		seedProspects(b, s, tn, 1000)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	url := s.api + "/api/v1/prospects?limit=50"
	var (
		mu  sync.Mutex
		lat []time.Duration
	)
	b.SetParallelism(4) // 4 × GOMAXPROCS concurrent clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+target.read)
		for pb.Next() {
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "req/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// seedProspects creates n prospects through the admin API, 8 at a time.
func seedProspects(b *testing.B, s *stack, tn tenant, n int) {
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				s.create(b, "/admin/v1/agencies/"+tn.agency+"/prospects", "prospect", map[string]any{
					"business_name": fmt.Sprint("Prospect ", i), "website_url": fmt.Sprintf("https://p%d.example", i),
					"health_score": i % 100, "lead_score": (i * 7) % 100,
				})
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}
