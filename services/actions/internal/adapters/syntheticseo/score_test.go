package syntheticseo

import (
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// The profile's scores follow its links: stronger followed links raise the
// authorities, weak sites and keyword anchors raise the spam score.
func TestScoreProfileFollowsTheLinks(t *testing.T) {
	const home = "https://acme.com/"
	links := func(n int, authority float64, nofollow bool, external int) []provider.Backlink {
		var l []provider.Backlink
		for i := range n {
			l = append(l, provider.Backlink{
				SourceDomain: string(rune('a'+i)) + ".com", TargetURL: home,
				DomainAuthority: authority, NoFollow: nofollow, ExternalPages: external,
			})
		}
		return l
	}
	strongDA, strongPA, strongSpam := scoreProfile(links(20, 80, false, 10), 0, home)
	weakDA, weakPA, weakSpam := scoreProfile(links(20, 10, false, 150), 0, home)
	nofollowDA, _, _ := scoreProfile(links(20, 80, true, 10), 0, home)
	_, _, stuffedSpam := scoreProfile(links(20, 80, false, 10), 15, home)

	if strongDA <= weakDA || strongPA <= weakPA {
		t.Errorf("strong links DA %v PA %v, weak links DA %v PA %v: want strong higher", strongDA, strongPA, weakDA, weakPA)
	}
	if nofollowDA >= strongDA {
		t.Errorf("nofollow links DA %v, followed %v: want nofollow to count less", nofollowDA, strongDA)
	}
	if weakSpam <= strongSpam || stuffedSpam <= strongSpam {
		t.Errorf("spam: strong %v, weak sites %v, keyword anchors %v: want both of the last higher", strongSpam, weakSpam, stuffedSpam)
	}
	if da, pa, spam := scoreProfile(nil, 0, home); da != 0 || pa != 0 || spam != 0 {
		t.Errorf("no links: DA %v PA %v spam %v, want zeros", da, pa, spam)
	}
}
