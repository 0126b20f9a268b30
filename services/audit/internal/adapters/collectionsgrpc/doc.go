// Package collectionsgrpc asks the collections service which agency owns
// a site (SiteOwnerService), for the audit events of a site that name no
// agency.
package collectionsgrpc
