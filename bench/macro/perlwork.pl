# SPDX-License-Identifier: MIT
# The perl macro workload (doc/benchmarks.md, "Whole programs"): a text
# pipeline as perl scripts run them, strings, hashes and nested data made
# and dropped.  Run as
#
#   perl perlwork.pl WORDS-FILE ROUNDS
#
# Debian's perl is built with the system malloc (usemymalloc='n'), so
# every scalar, array and hash body goes through the allocator under
# test.  Each round reads the words (macro-gen words), counts them and
# the words that follow each in hashes of hashes, sorts, rewrites every
# line with regex substitutions, builds a record (a hash of arrays) per
# line and an index over them, joins and splits strings, then drops it
# all.  Prints totals that depend on the input only: every hash is walked
# in sorted order, no addresses, no floats.
use strict;
use warnings;

sub one_round {
	my ($lines, $r) = @_;
	my (%count, %follow, %first);
	my ($prev, $pos) = (undef, 0);

	for my $line (@$lines) {
		for my $w (split ' ', $line) {
			$count{$w}++;
			$first{$w} //= $pos;
			$follow{$prev}{$w}++ if defined $prev;
			$prev = $w;
			$pos++;
		}
	}
	my @words = sort { $count{$b} <=> $count{$a} || $a cmp $b }
		keys %count;

	# every line rewritten: syllables marked, words capitalised, vowels
	# doubled, then the marks taken out again
	my ($marked, $letters) = (0, 0);
	my @rewritten;
	for my $line (@$lines) {
		my $s = $line;
		$marked += ($s =~ s/(ka|lo|shi|qua)/<$1>/g) || 0;
		$s =~ s/\b(\w)(\w*)/\u$1$2/g;
		$s =~ s/([aeiou])/$1$1/g;
		(my $t = $s) =~ s/[<>]//g;
		$letters += length $t;
		push @rewritten, $t;
	}

	# a record per line, and an index from each word to its records
	my (@records, %index);
	for my $i (0 .. $#$lines) {
		my @w = split ' ', $lines->[$i];
		my $rec = {
			n => $i,
			words => \@w,
			upper => [ map { uc } @w ],
			lengths => [ map { length } @w ],
			text => $rewritten[$i],
		};
		push @records, $rec;
		push @{ $index{$_} }, $rec for @w;
	}
	my $indexed = 0;
	for my $w (sort keys %index) {
		my $recs = $index{$w};
		$indexed += @$recs;
		$indexed += $recs->[-1]{lengths}[0] // 0;
	}

	# strings built, joined and split again
	my $text = '';
	for my $w (@words) {
		$text .= sprintf "%s=%d/%d;", $w, $count{$w},
			scalar keys %{ $follow{$w} // {} };
	}
	my $rejoined = 0;
	for my $f (split /;/, $text) {
		my ($k, $v) = split /=/, $f, 2;
		$rejoined += length($k) + length($v);
	}
	my $joined = join ' ', map { scalar reverse $_ } @rewritten;
	my $pairs = 0;
	$pairs += scalar keys %{ $follow{$_} } for sort keys %follow;

	my @top = map { [ $_, $count{$_}, scalar keys %{ $follow{$_} // {} } ] }
		@words[0 .. ($#words < 4 ? $#words : 4)];
	return ([ scalar @words, $pos, $marked, $letters, $indexed, $rejoined,
		  length $joined, $pairs ], $r ? undef : \@top);
}

if (@ARGV != 2 || $ARGV[1] !~ /^[0-9]+$/) {
	print STDERR "usage: perlwork.pl WORDS-FILE ROUNDS\n";
	exit 2;
}
my ($file, $rounds) = @ARGV;
open my $fh, '<', $file or die "perlwork.pl: $file: $!\n";
my @lines = <$fh>;
close $fh;
chomp @lines;

my $total = 0;
for my $r (0 .. $rounds - 1) {
	my ($res, $top) = one_round(\@lines, $r);
	if (!$r) {
		printf "distinct %d words %d marked %d letters %d indexed %d"
			. " rejoined %d joined %d pairs %d\n", @$res;
		printf "top %s %d %d\n", @$_ for @$top;
	}
	$total += $_ for @$res;
}
print "rounds $rounds total $total\n";
