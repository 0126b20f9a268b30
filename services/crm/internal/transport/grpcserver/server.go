package grpcserver

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	"github.com/atrium-hq/atrium/services/crm/internal/app"
)

// Server implements the CRM's public, admin and internal gRPC services.
type Server struct {
	crmv1.UnimplementedCRMServiceServer
	crmv1.UnimplementedCRMAdminServiceServer
	crmv1.UnimplementedAPIKeyServiceServer
	crmv1.UnimplementedClientAccessServiceServer

	directory *app.Directory
	keys      *app.Keys
	pipeline  *app.Pipeline
	people    *app.People
	sessions  *app.Sessions
}

// NewServer returns a server over the use cases.
func NewServer(directory *app.Directory, keys *app.Keys, pipeline *app.Pipeline, people *app.People, sessions *app.Sessions) *Server {
	return &Server{directory: directory, keys: keys, pipeline: pipeline, people: people, sessions: sessions}
}

// Register registers every CRM service on s. PeopleService, the session
// services and AgencyClientsService are types of their own:
// PeopleService's CreateMember is not the admin API's, nor is
// AgencyClientsService's ListClients.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	crmv1.RegisterCRMServiceServer(r, s)
	crmv1.RegisterCRMAdminServiceServer(r, s)
	crmv1.RegisterAPIKeyServiceServer(r, s)
	crmv1.RegisterClientAccessServiceServer(r, s)
	crmv1.RegisterPeopleServiceServer(r, &peopleServer{Server: s})
	crmv1.RegisterSessionServiceServer(r, &sessionServer{Server: s})
	crmv1.RegisterSessionAuthServiceServer(r, &sessionServer{Server: s})
	crmv1.RegisterAgencyClientsServiceServer(r, &agencyClientsServer{Server: s})
}

func ts(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }

// tsOrNull renders a nil time as an unset message, which the gateway prints
// as JSON null.
func tsOrNull(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(*t)
}

func stringOrNull(s string) *wrapperspb.StringValue {
	if s == "" {
		return nil
	}
	return wrapperspb.String(s)
}
