package pgdb

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// ObservePool reports pool's statistics (pgxpool.Stat) as metrics of mp,
// read when they are collected, with db.client.connection.pool.name set to
// name (the service: crm). The connection counts and the maximum follow
// the OpenTelemetry database conventions; the acquisition counters, which
// the conventions have no names for, are Atrium's:
//
//	db.client.connection.count{db.client.connection.state=used|idle}
//	db.client.connection.max
//	db.client.connection.timeouts       acquisitions given up (caller canceled or timed out)
//	atrium.db.pool.acquires             acquisitions
//	atrium.db.pool.acquire.duration     total seconds spent acquiring
//	atrium.db.pool.empty_acquires       acquisitions that had to wait for a connection
//
// Unregister the returned registration when the pool closes.
func ObservePool(pool *pgxpool.Pool, name string, mp metric.MeterProvider) (metric.Registration, error) {
	m := mp.Meter("github.com/atrium-hq/atrium/platform/pgdb")
	count, err1 := m.Int64ObservableUpDownCounter("db.client.connection.count", metric.WithUnit("{connection}"),
		metric.WithDescription("Connections of the pool, by state: used (acquired) or idle."))
	maxConns, err2 := m.Int64ObservableUpDownCounter("db.client.connection.max", metric.WithUnit("{connection}"),
		metric.WithDescription("Most connections the pool opens."))
	timeouts, err3 := m.Int64ObservableCounter("db.client.connection.timeouts", metric.WithUnit("{timeout}"),
		metric.WithDescription("Acquisitions of a connection that were given up because their context ended."))
	acquires, err4 := m.Int64ObservableCounter("atrium.db.pool.acquires", metric.WithUnit("{acquire}"),
		metric.WithDescription("Connections acquired from the pool."))
	waited, err5 := m.Float64ObservableCounter("atrium.db.pool.acquire.duration", metric.WithUnit("s"),
		metric.WithDescription("Total time spent acquiring connections from the pool."))
	empty, err6 := m.Int64ObservableCounter("atrium.db.pool.empty_acquires", metric.WithUnit("{acquire}"),
		metric.WithDescription("Acquisitions that found no idle connection and waited for one to be released or opened."))
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, err
	}
	poolName := semconv.DBClientConnectionPoolName(name)
	all := metric.WithAttributeSet(attribute.NewSet(poolName))
	used := metric.WithAttributeSet(attribute.NewSet(poolName, semconv.DBClientConnectionStateUsed))
	idle := metric.WithAttributeSet(attribute.NewSet(poolName, semconv.DBClientConnectionStateIdle))
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := pool.Stat()
		o.ObserveInt64(count, int64(st.AcquiredConns()), used)
		o.ObserveInt64(count, int64(st.IdleConns()), idle)
		o.ObserveInt64(maxConns, int64(st.MaxConns()), all)
		o.ObserveInt64(timeouts, st.CanceledAcquireCount(), all)
		o.ObserveInt64(acquires, st.AcquireCount(), all)
		o.ObserveFloat64(waited, st.AcquireDuration().Seconds(), all)
		o.ObserveInt64(empty, st.EmptyAcquireCount(), all)
		return nil
	}, count, maxConns, timeouts, acquires, waited, empty)
}
