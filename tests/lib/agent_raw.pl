#!/usr/bin/perl
# A raw client of the modsign agent for the tests (src/agent/PROTOCOL.md):
# sends bytes as given, well-formed or not, and prints what comes back.
#   agent_raw.pl send N HEX...    connect to $MODSIGN_AGENT_SOCK, send each
#                                 HEX argument (spaces allowed inside), then
#                                 print up to N reply frames' bodies as hex,
#                                 one a line, then "EOF" when the agent closes
#                                 the connection within a second, else "OPEN"
#                                 ("WRITE-FAILED <error>" first when a send
#                                 failed: the agent closed before reading it)
#   agent_raw.pl late N HEX...    as send, but waits (up to 10 s) for the
#                                 agent to send first (a refusal), then sends
#   agent_raw.pl frame HEX        the body HEX with its 4-byte length in front
#   agent_raw.pl stall SECS HEX   send HEX, then hold the connection SECS seconds
#   agent_raw.pl hold N SECS      open N connections, print "HELD N" once all
#                                 are connected, hold them SECS seconds, idle
# Exits 2 when it cannot connect (the error on stderr).
use strict;
use warnings;
use IO::Socket::UNIX;
use IO::Select;

sub unhex { my $h = join('', @_); $h =~ s/\s+//g; return pack('H*', $h); }

my $mode = shift @ARGV // '';
if ($mode eq 'frame') {
	my $b = unhex(@ARGV);
	print unpack('H*', pack('N', length($b)) . $b), "\n";
	exit 0;
}
my $path = $ENV{MODSIGN_AGENT_SOCK} // '';
if ($mode eq 'hold') {
	my ($n, $secs) = @ARGV;
	my @held;
	for (1 .. $n) {
		my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path);
		if (!$c) {
			print STDERR "agent_raw: connect $path (", scalar(@held) + 1, "): $!\n";
			exit 2;
		}
		push @held, $c;
	}
	$| = 1;
	print "HELD ", scalar(@held), "\n";
	sleep $secs;
	exit 0;
}
my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path);
if (!$s) {
	print STDERR "agent_raw: connect $path: $!\n";
	exit 2;
}
$s->autoflush(1);
$SIG{PIPE} = 'IGNORE';
if ($mode eq 'stall') {
	my $secs = shift @ARGV;
	syswrite($s, unhex(@ARGV));
	sleep $secs;
	exit 0;
}
die "usage: agent_raw.pl send|late|frame|stall|hold ...\n" if $mode ne 'send' && $mode ne 'late';
my $want = shift @ARGV;
my $sel = IO::Select->new($s);
$sel->can_read(10) if $mode eq 'late';
for (@ARGV) {
	my $b = unhex($_);
	my $w = syswrite($s, $b);
	if (!defined($w) || $w != length($b)) {
		print "WRITE-FAILED ", (defined($w) ? "short" : $!), "\n";
		last;
	}
}
my $buf = '';
my $got = 0;
my $eof = 0;
while (!$eof && $sel->can_read($got < $want ? 10 : 1)) {
	my $n = sysread($s, $buf, 65536, length($buf));
	$eof = 1 if !$n;
	while (length($buf) >= 4) {
		my $len = unpack('N', $buf);
		last if length($buf) < 4 + $len;
		print unpack('H*', substr($buf, 4, $len)), "\n";
		$got++;
		$buf = substr($buf, 4 + $len);
	}
}
print "PARTIAL ", unpack('H*', $buf), "\n" if length($buf);
print $eof ? "EOF\n" : "OPEN\n";
exit 0;
