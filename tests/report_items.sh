#!/usr/bin/env bash
# report_items.sh: what a person sees of `penumbra report` without hovering (CTest
# report_items, labels browser and slow; issue 36). Headless Chromium (Debian's, as
# report_browser.sh) renders two pages; a first script in a copy of each records JavaScript
# errors and, once loaded, the page's rendered text (innerText: nothing hidden) and every SVG
# text with a non-empty box. Each item the report promises must be in that text:
# - a check and the counterexample it wrote (linked from the check's row), and
#   tests/report-nested.trace.yaml: the story as text
#   (the events, the crash point and state, each unsynced write's fate, what recovery
#   replayed and read, the violation), the failing page's history, its header decoded, the
#   crash inside recovery and the recovery of it, the swimlanes' labels;
# - a compare with a check of the same scenario and modes: the crash-safe? row, a log-scale
#   axis where the modes differ tenfold, axis labels with their units, the throughput plot,
#   the legends (modes, Umbra's slots);
# - on both: the provenance (version, commit, command line, inputs' hashes) and no date.
# And pixels (tests/report_pixels.py): each page laid out at its full height, a probe finds
# points whose colour the markup gives (legend swatches, the largest uncovered bar or mark of
# each SVG, a segment of each plot's topmost line) and a screenshot at that size must show
# those colours there, for each kind of section (costs, check, trace).
# Three controls prove the checks can fail: the story removed from the page, the decoded
# header hidden by CSS (in the markup still, not on the screen), and the drawing broken by
# CSS (every bar, mark, line and swatch painted white), must each be caught.
# Usage: report_items.sh PENUMBRA_BINARY SOURCE_DIR   (PN_REPORT_SHOTS=DIR: keep the screenshots)
set -u
source "$(dirname "$0")/report_lib.sh"
report_setup "$0" "$@"
report_chromium
make_inputs "$bin" "$src" "$tmp" || { echo "FAIL the inputs could not be made"; exit 1; }
cd "$tmp" || exit 2

# The same scenario under fpw and nofpw, compared and checked; check --modes writes each
# scenario's "mode", added here to a check of one file per mode.
for m in fpw nofpw; do
	cat >"safe-$m.yaml" <<-EOF
		name: safe
		seed: 7
		protocol: {mode: $m}
		storage: {pages: 12, buffers: 5, wal_segment_size: 64KiB}
		checkpoint: {interval: 0s, every_transactions: 5, max_wal_size: 0}
		workload: {kind: random, clients: 2, transactions: 6, pages_per_transaction: 2}
		crash: {points: all, max_unsynced: 2, tear: sectors}
	EOF
done
"$bin" check safe-fpw.yaml safe-nofpw.yaml --points-every 16 --nested 0 --quiet \
	--json safe.json >/dev/null 2>&1 # a violation (nofpw) without expect: is status 1
"$bin" compare safe-fpw.yaml --modes fpw,nofpw,umbra --json safec.json >/dev/null 2>&1 &&
	python3 - safe.json <<-'PY'
		import json, sys
		d = json.load(open(sys.argv[1]))
		assert [s["verdict"] for s in d["scenarios"]] == ["pass", "violation"], d
		for s in d["scenarios"]:
		    s["mode"] = "fpw" if s["file"].endswith("safe-fpw.yaml") else "nofpw"
		json.dump(d, open(sys.argv[1], "w"), indent=1)
	PY
verdict "inputs: a compare and a check of one scenario under fpw and nofpw" $?
cp "$src/tests/report-nested.trace.yaml" nested.yaml

probe='<script>(function(){var errs=[];window.addEventListener("error",function(e){errs.push(e.message);});
window.addEventListener("load",function(){var svg=[];document.querySelectorAll("svg text").forEach(function(t){
var b=t.getBBox();if(b.width>0&&b.height>0)svg.push(t.textContent);});var text=document.body.innerText;
var p=document.createElement("pre");p.id="pn-visible";p.textContent="ERRORS "+errs.length+" "+errs.join(" | ")+"\n"+text+"\nSVG TEXT\n"+svg.join("\n");
document.body.appendChild(p);});})();</script>'

# visible PAGE: the text Chromium renders of PAGE (as the probe saw it) into PAGE.txt; false
# when the page did not load or a script failed
visible() {
	with_probe "$1" "$probe" probed.html
	chrome --dump-dom "file://$tmp/probed.html" 2>log.txt | python3 -c '
import html, re, sys
m = re.search(r"<pre id=\"pn-visible\">(.*?)</pre>", sys.stdin.read(), re.S)
sys.stdout.write(html.unescape(m.group(1)) if m else "")' >"$1.txt"
	[[ -s $1.txt ]] && head -n 1 "$1.txt" | grep -q '^ERRORS 0 ' &&
		! grep -E 'CONSOLE.*(Uncaught|rror)' log.txt >/dev/null
}

pixprobe='<script>window.addEventListener("load",function(){var T=[],per={};
function kind(el){var s=el.closest("section");return s?s.getAttribute("data-kind"):"page";}
function top(el,x,y){return document.elementFromPoint(x,y)===el;}
function add(el,what,x,y,c){T.push({kind:kind(el),what:what,x:x+window.scrollX,y:y+window.scrollY,color:c});}
document.querySelectorAll(".legend i").forEach(function(el){var k=kind(el),m=/background:\s*(#[0-9a-fA-F]{3,6})/.exec(el.getAttribute("style")||"");
if(!m||(per[k]||0)>=3)return;var r=el.getBoundingClientRect(),x=r.left+r.width/2,y=r.top+r.height/2;
if(top(el,x,y)){per[k]=(per[k]||0)+1;add(el,"legend swatch "+el.parentNode.textContent.trim(),x,y,m[1]);}});
document.querySelectorAll("svg").forEach(function(s,i){var best=null,area=0;
s.querySelectorAll("rect[fill],circle[fill]").forEach(function(el){var f=el.getAttribute("fill"),r=el.getBoundingClientRect();
if(!/^#[0-9a-fA-F]{3,6}$/.test(f)||r.width<4||r.height<4)return;var x=r.left+r.width/2,y=r.top+r.height/2;
if(top(el,x,y)&&r.width*r.height>area){area=r.width*r.height;best=[el,x,y,f];}});
if(best)add(best[0],"bar "+i+" ("+best[0].tagName+")",best[1],best[2],best[3]);
var ls=s.querySelectorAll("polyline[stroke]");for(var j=ls.length-1,done=false;j>=0&&!done;j--){var pl=ls[j],m=pl.getScreenCTM(),pts=pl.points;
for(var q=1;q<pts.length&&!done;q++){var a=pts[q-1].matrixTransform(m),b=pts[q].matrixTransform(m),x=(a.x+b.x)/2,y=(a.y+b.y)/2;
if(Math.hypot(b.x-a.x,b.y-a.y)>=14&&top(pl,x,y)){add(pl,"line "+i,x,y,pl.getAttribute("stroke"));done=true;}}}});
var p=document.createElement("pre");p.id="pn-pixels";p.textContent=JSON.stringify({height:document.documentElement.scrollHeight,targets:T});
document.body.appendChild(p);});</script>'

# pixels PAGE KIND...: PAGE laid out at its full height (twice: the second at the height the
# first found), the probe's points and colours into PAGE.targets.json, a screenshot at that
# size, and report_pixels.py's verdict on them (each KIND must have its pixels)
pixels() {
	local page=$1 h=1600 pass
	shift
	with_probe "$page" "$pixprobe" pprobed.html
	for pass in 1 2; do
		chrome --window-size=1200,$h --dump-dom "file://$tmp/pprobed.html" 2>/dev/null | python3 -c '
import html, re, sys
m = re.search(r"<pre id=\"pn-pixels\">(.*?)</pre>", sys.stdin.read(), re.S)
sys.stdout.write(html.unescape(m.group(1)) if m else "{}")' >"$page.targets.json"
		h=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("height", 0))' "$page.targets.json")
		[[ $h -gt 0 && $h -le 16000 ]] || { echo "    the page did not lay out (height ${h:-none})"; return 1; }
	done
	chrome --window-size=1200,$h --screenshot="$tmp/$page.png" "file://$tmp/$page" >/dev/null 2>&1
	# PN_REPORT_SHOTS=DIR keeps each page's screenshot (what a person sees) in DIR
	if [[ -n ${PN_REPORT_SHOTS:-} ]]; then
		mkdir -p "$PN_REPORT_SHOTS" && cp "$tmp/$page.png" "$PN_REPORT_SHOTS/"
	fi
	python3 "$src/tests/report_pixels.py" "$tmp/$page.png" "$page.targets.json" "$@" >"$page.pixels.txt"
}

# items PAGE.txt NAME:REGEX...: prints each item missing from the page's text; false if any
items() {
	local text=$1 miss=0 item
	shift
	for item in "$@"; do
		if ! grep -Pzq -- "${item#*:}" "$text"; then
			echo "    missing: ${item%%:*} (/${item#*:}/)"
			miss=1
		fi
	done
	if grep -Eq '\b[0-9](\.[0-9]+)?e[+-][0-9]' "$text"; then # R4: one number format
		echo "    a number in exponent form: $(grep -Eo '\b[0-9](\.[0-9]+)?e[+-][0-9]+' "$text" | head -n 1)"
		miss=1
	fi
	if grep -Eq '\b(19|20)[0-9]{2}-[01][0-9]-[0-3][0-9]\b' "$text"; then
		echo "    a date on the page: $(grep -Eo '\b(19|20)[0-9]{2}-[01][0-9]-[0-3][0-9]\b' "$text" | head -n 1)"
		miss=1
	fi
	return $miss
}

provenance=(
	"provenance:Written by penumbra [0-9.]+ \(commit [0-9a-f]{7}|Written by penumbra [0-9.]+ \(commit unknown"
	"the command line:with penumbra report [^\n]*-o [a-z]+\.html"
	"each input's hash:XXH3-64 of its bytes[\s\S]*\b[0-9a-f]{16}\b"
)
story=(
	"${provenance[@]}"
	"the scenario's hash:Scenario hash [0-9a-f]{16}, as the trace records it"
	"the story:What happened"
	"the run's events:The run: its last 48 events up to event 55"
	"an event in text:#55\s+3\.339791\s+AIO control\s+dispatch write control \(control\)"
	"the crash point:The crash after event 55, in state p11"
	"an unsynced write's fate:write #[0-9]+ to control \(control\), 512 B at offset 0[^\n]*: persisted"
	"what recovery read:Recovery read the control file and its checkpoint, replayed [0-9]+ WAL records up to LSN [0-9A-F]+"
	"the violation:The violation: exactness, page 2: page 2 differs from the oracle at byte 4"
	"the page's history:The history of page 2"
	"an update in the history:#8\s+0\.123254\s+step backend 0: update page 2 \(insert\)\s+100E8"
	"a checkpoint in the history:checkpoint 1 begins"
	"a write with its slot:dispatch write data \(checkpoint\) page 2 slot 1 offset 57344"
	"the header decoded:pd_lsn\s+100E8\s+0\s+pd_checksum\s+0x509D\s+0x509D"
	"pd_lower and pd_upper:pd_lower\s+0x128\s+0x128\s+pd_upper\s+0x460\s+0x460"
	"the checksum verdict:checksum is 0x509D: pd_checksum matches it"
	"the crash inside recovery:Then a crash inside recovery, after its event 21 in state p1,p3,t5:1"
	"its crash state:The crash inside recovery \(its own events numbered\) after event 21, in state p1,p3,t5:1"
	"the recovery of it:The recovery of the crash inside recovery read the control file"
	"the nested violation:The violation: checksum \(after a crash inside recovery\), page 4"
	"the replay line:Replay it: penumbra replay nested\.yaml"
	"the swimlanes' labels:SVG TEXT[\s\S]*\nbackend 0\n[\s\S]*\ncrash\n"
)
compare=(
	"${provenance[@]}"
	"the crash-safe row:crash-safe\? \(check\)\s+yes: pass, [0-9]+ states\s+NO: [a-z_]+\s+not checked"
	"what wrote an input:penumbra compare safe-fpw\.yaml --modes fpw,nofpw,umbra --json safec\.json"
	"the throughput:Throughput over virtual time"
	"a log scale where modes differ tenfold:SVG TEXT[\s\S]*\nWAL inserted \(MiB\) \(log scale\)\n"
	"axis labels with units:SVG TEXT[\s\S]*\nvirtual time \(s\)\n[\s\S]*\ncommits / s\n[\s\S]*\nWAL \(MiB\)\n"
	"the check plot's axis:SVG TEXT[\s\S]*\nstates per scenario \(log scale\): crash states enumerated, of them recovered\n"
	"the check plot's legend:crash states: pass, as expected\s+crash states: violation found, as expected\s+crash states: verdict NOT as expected\s+of them recovered"
	"the commit latency plot:Commit latency over virtual time"
	"a violation whose trace is not an input:\(trace [^\n]*no-delay-chkpt\.trace\.yaml, not among this report's inputs\)"
	"its axis:SVG TEXT[\s\S]*\naverage commit latency \(ms\)\n"
	"a legend of the modes:\nfpw\s+nofpw\s+umbra\n"
	"the slots' legend:slot 0\s+slot 1\s+(slot [0-9]\s+)*not sampled yet"
)

"$bin" report check.json traces/no-delay-chkpt.trace.yaml nested.yaml -o story.html
verdict "report of a check, its counterexample and a crash inside recovery" $?
grep -q '<a href="#trace-1">exactness</a>' story.html && grep -q 'id="trace-1"' story.html
verdict "the check's violation links to its trace's section" $?
visible story.html
verdict "Chromium renders it, no script error" $?
items story.html.txt "${story[@]}"
verdict "every item of a counterexample is on the screen (${#story[@]})" $?
"$bin" report safec.json safe.json compare.json check.json -o compare.html
verdict "report of a compare with its check, and another compare and check" $?
visible compare.html
verdict "Chromium renders it, no script error" $?
items compare.html.txt "${compare[@]}"
verdict "every item of a compare is on the screen (${#compare[@]})" $?

pixels story.html check trace
verdict "the story page's pixels: $(grep -c '^ok' story.html.pixels.txt) as the markup says" $?
grep '^FAIL\|^kind' story.html.pixels.txt | sed 's/^/    /'
pixels compare.html costs check
verdict "the compare page's pixels: $(grep -c '^ok' compare.html.pixels.txt) as the markup says" $?
grep '^FAIL\|^kind' compare.html.pixels.txt | sed 's/^/    /'

# the controls: each must be caught
perl -0pe 's|<ol class="story">.*?</ol>||s' story.html >nostory.html
visible nostory.html && ! items nostory.html.txt "${story[@]}" >missing.txt
verdict "control: a page without the story is caught ($(wc -l <missing.txt) items missing)" $?
sed 's|</style>|table.header{display:none}</style>|' story.html >hidden.html
visible hidden.html && ! items hidden.html.txt "${story[@]}" >missing.txt &&
	grep -q 'the header decoded' missing.txt && grep -q 'pd_lsn' hidden.html
verdict "control: the header in the markup but hidden is caught" $?

sed 's|</style>|svg rect,svg circle,svg polyline{fill:#fff!important;stroke:#fff!important}.legend i{background:#fff!important}</style>|' \
	compare.html >white.html
! pixels white.html costs check && ! grep -q '^ok' white.html.pixels.txt
verdict "control: the drawing painted white is caught ($(grep -c '^FAIL' white.html.pixels.txt) pixels wrong)" $?

echo "report_items: $failed failed"
[[ $failed -eq 0 ]]
