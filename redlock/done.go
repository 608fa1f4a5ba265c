package redlock

import "slices"

// The rules that decide a call before every node answered: each is a
// quorum.Done for the call's fan-out, consulted after every answer.

// quorumDone stops as soon as need yes votes arrived, or as soon as need
// can no longer be reached.
func quorumDone(need int) func([]answer, []bool) bool {
	return func(as []answer, got []bool) bool {
		yes, open := 0, 0
		for i, a := range as {
			switch {
			case !got[i]:
				open++
			case a.vote == voteYes:
				yes++
			}
		}
		return yes >= need || yes+open < need
	}
}

// distinctQuorumDone is quorumDone counting one yes per server
// (docs/design.md S7): two nodes that answer with the same run_id are one
// vote.
func distinctQuorumDone(need int) func([]answer, []bool) bool {
	return func(as []answer, got []bool) bool {
		yes, open := 0, 0
		var seen [inlineNodes]int64
		for i, a := range as {
			switch {
			case !got[i]:
				open++
			case a.vote == voteYes && (a.server == 0 || !containsServer(seen[:min(yes, inlineNodes)], a.server)):
				if yes < inlineNodes {
					seen[yes] = a.server
				}
				yes++
			}
		}
		return yes >= need || yes+open < need
	}
}

// containsServer reports whether ids holds id.
func containsServer(ids []int64, id int64) bool { return slices.Contains(ids, id) }

// deletedOnMajority stops once need nodes said yes (a release).
func deletedOnMajority(need int) func([]answer, []bool) bool {
	return func(as []answer, got []bool) bool {
		yes := 0
		for i, a := range as {
			if got[i] && a.vote == voteYes {
				yes++
			}
		}
		return yes >= need
	}
}

// batchDone stops an extend_many call of k locks once every lock of the
// batch has need yes votes, or can no longer get them; votes[i][j] is node
// i's answer for lock j, set before node i's answer is collected.
func batchDone(votes [][]int64, k, need int) func([]answer, []bool) bool {
	return func(as []answer, got []bool) bool {
		for j := range k {
			yes, open := 0, 0
			for i, a := range as {
				switch {
				case !got[i]:
					open++
				case a.vote == voteYes && votes[i][j] == 1:
					yes++
				}
			}
			if yes < need && yes+open >= need {
				return false
			}
		}
		return true
	}
}
