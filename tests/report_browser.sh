#!/usr/bin/env bash
# report_browser.sh: reports as a person sees them (CTest report_browser, label browser):
# `penumbra report` of a compare, a check and a counterexample, each rendered by Debian's
# headless Chromium (scripts/deps.sh installs it; without it this test FAILS, it does not
# skip). Each page gets, in a copy, a first script that records errors (window.onerror,
# console.error) and, once loaded, every SVG's drawn elements with a non-empty box and
# whether hovering over a value shows it; the DOM Chromium dumps must show no error, no empty
# SVG and the hover value, and Chromium's own console log
# (--enable-logging=stderr) no error. A screenshot of each is taken (PNG, checked to be one).
# Two controls prove the checks can fail: a page with a script error and one with an SVG
# emptied must each be caught.
# Usage: report_browser.sh PENUMBRA_BINARY SOURCE_DIR [SCREENSHOT_DIR]
set -u
source "$(dirname "$0")/report_lib.sh"
report_setup "$0" "$@"
shots=${3:-$tmp}
report_chromium
make_inputs "$bin" "$src" "$tmp" || { echo "FAIL the inputs could not be made"; exit 1; }

probe='<script>(function(){var errs=[];window.addEventListener("error",function(e){errs.push("error: "+e.message);});
var ce=console.error;console.error=function(){errs.push("console.error: "+Array.prototype.join.call(arguments," "));ce.apply(console,arguments);};
window.addEventListener("load",function(){var out=[];document.querySelectorAll("svg").forEach(function(s,i){var n=0;
s.querySelectorAll("rect:not(.frame),polyline,circle,line:not(.grid),text").forEach(function(el){var b=el.getBBox();if(b.width>0||b.height>0)n++;});
var r=s.getBoundingClientRect();out.push(i+":"+n+":"+Math.round(r.width)+"x"+Math.round(r.height));});
var el=document.querySelector("[data-tip]"),t=document.getElementById("tip"),tip="none";
if(el&&t){el.dispatchEvent(new MouseEvent("mouseover",{bubbles:true}));tip=t.textContent===el.getAttribute("data-tip")&&t.style.display==="block"?"shown":"NOT-SHOWN";}
var p=document.createElement("pre");p.id="pn-probe";p.textContent="ERRORS "+errs.length+" "+errs.join(" | ")+"\nTIP "+tip+" SVGS "+out.join(" ");document.body.appendChild(p);});})();</script>'

# render HTML: prints "ok" when the page loads without errors and every SVG has drawn
# elements; else what was wrong
render() {
	local page=$1 probed=$tmp/probed.html
	with_probe "$page" "$probe" "$probed"
	chrome --dump-dom "file://$probed" >"$tmp/dom.html" 2>"$tmp/log.txt"
	local line errs svgs
	line=$(grep -A1 -m1 '<pre id="pn-probe">' "$tmp/dom.html" | tr '\n' ' ')
	[[ -n $line ]] || { echo "no probe output: the page did not load"; return; }
	errs=$(sed -n 's/.*ERRORS \([0-9]*\).*/\1/p' <<<"$line")
	svgs=$(sed -n 's/.*SVGS \([^<]*\).*/\1/p' <<<"$line")
	if [[ $errs != 0 ]]; then echo "page errors: $line"; return; fi
	if grep -E 'CONSOLE.*(Uncaught|rror)' "$tmp/log.txt" >/dev/null; then
		echo "console: $(grep -m1 CONSOLE "$tmp/log.txt")"; return
	fi
	[[ -n $svgs ]] || { echo "no SVG"; return; }
	[[ $line == *"TIP shown"* ]] || { echo "hovering shows no value: $line"; return; }
	for s in $svgs; do
		IFS=: read -r i n box <<<"$s"
		if [[ $n -lt 1 || $box == 0x* || $box == *x0 ]]; then echo "SVG $i is empty ($s)"; return; fi
	done
	echo "ok $(wc -w <<<"$svgs") SVGs"
}

cd "$tmp" || exit 2
for kind in compare check trace; do
	case $kind in
	compare) input=compare.json ;;
	check) input=check.json ;;
	trace) input=trace.yaml ;;
	esac
	"$bin" report "$input" -o "$kind.html"
	verdict "report of the $kind" $?
	result=$(render "$kind.html")
	[[ $result == ok* ]]
	verdict "Chromium renders the $kind report: $result" $?
	chrome --window-size=1200,1600 --screenshot="$shots/$kind.png" "file://$tmp/$kind.html" \
		>/dev/null 2>&1
	[[ $(head -c 8 "$shots/$kind.png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a &&
		$(stat -c %s "$shots/$kind.png") -gt 20000 ]]
	verdict "screenshot $kind.png ($(stat -c %s "$shots/$kind.png" 2>/dev/null) bytes)" $?
done

# the controls: each defect must be caught
sed 's|</body>|<script>no_such_function();</script></body>|' compare.html >broken.html
result=$(render broken.html)
[[ $result == page\ errors* ]]
verdict "control: a script error is caught ($result)" $?
awk 'done || !/<svg/ { print; next } { sub(/>.*<\/svg>/, "></svg>"); print; done = 1 }' \
	compare.html >empty.html
result=$(render empty.html)
[[ $result == SVG* ]]
verdict "control: an empty SVG is caught ($result)" $?

echo "report_browser: $failed failed"
[[ $failed -eq 0 ]]
