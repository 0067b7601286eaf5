#!/usr/bin/perl
# A fake `modsign agent` for the tests: whatever listens at a socket path,
# speaking the protocol of src/agent/PROTOCOL.md on its own (written from
# that text, sharing no code with src/agent/proto.c), one connection at a
# time, with a chosen lie. It serves until killed.
#   fake_agent.pl SOCK MODE NAME [KEY]
#     SOCK   where to listen (made mode 0777: any user may connect; the
#            directory decides who reaches it)
#     NAME   the key name HELLO announces (what a real agent announces)
#     MODE   what it answers (HELLO: RSA, 1 lane, NAME; MATCH: OK unless told)
#       sign      SIGN: a PKCS#1 v1.5 signature by KEY (a PEM file) of the
#                 DigestInfo of the digest asked for (openssl pkeyutl): with
#                 the right key, what the real agent would return
#       wrong     SIGN: 256 bytes of 0x42 (the length of an RSA-2048 signature)
#       short     SIGN: 5 bytes of 0x42
#       long      SIGN: 2,048 bytes of 0x42 (the protocol's ceiling)
#       mismatch  MATCH: MISMATCH (the key it holds is another certificate's)
#       refuse    every request: a refusal ("not the agent's user"), then close
#       silent    reads requests, never answers
#       full      never accepts, its backlog kept full by connections of its own
# Once listening it prints "READY" on stdout, then "REQ <type>" for each
# request it reads (so a test sees whether a client sent anything at all).
use strict;
use warnings;
use IO::Socket::UNIX;
use Socket qw(AF_UNIX SOCK_STREAM pack_sockaddr_un);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
use Errno qw(EAGAIN);
use File::Temp qw(tempdir);

my ($path, $mode, $name, $key) = @ARGV;
die "usage: fake_agent.pl SOCK MODE NAME [KEY]\n" if !defined $name;
die "fake_agent: mode sign needs KEY\n" if $mode eq 'sign' && !defined $key;
$SIG{PIPE} = 'IGNORE';
$| = 1;

# DigestInfo prefixes (RFC 8017, 9.2 note 1), by the protocol's hash codes.
my %di = (
	1 => '3021300906052b0e03021a05000414',
	2 => '302d300d06096086480165030402040500041c',
	3 => '3031300d060960864801650304020105000420',
	4 => '3041300d060960864801650304020205000430',
	5 => '3051300d060960864801650304020305000440',
);

unlink $path;
my $l = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $path,
			      Listen => $mode eq 'full' ? 0 : 8)
	or die "fake_agent: listen $path: $!\n";
chmod 0777, $path or die "fake_agent: chmod $path: $!\n";

if ($mode eq 'full') {
	# Connections nobody accepts, until the kernel says the backlog is full.
	my @held;
	for (1 .. 64) {
		socket(my $h, AF_UNIX, SOCK_STREAM, 0) or die "fake_agent: socket: $!\n";
		fcntl($h, F_SETFL, fcntl($h, F_GETFL, 0) | O_NONBLOCK);
		if (!connect($h, pack_sockaddr_un($path))) {
			die "fake_agent: connect: $!\n" if $! != EAGAIN;
			last;
		}
		push @held, $h;
	}
	print "READY\n";
	sleep 1 while 1;
}
print "READY\n";

# read_n FH N: exactly N bytes, or undef at the end of the connection.
sub read_n {
	my ($fh, $n) = @_;
	my $buf = '';
	while (length($buf) < $n) {
		my $k = sysread($fh, $buf, $n - length($buf), length($buf));
		return undef if !$k;
	}
	return $buf;
}

sub send_frame {
	my ($fh, $body) = @_;
	syswrite($fh, pack('N', length($body)) . $body);
}

# reply TYPE STATUS TEXT [REST]: a reply frame (PROTOCOL.md, "Replies").
sub reply {
	my ($fh, $type, $status, $text, $rest) = @_;
	send_frame($fh, pack('CCn', $type, $status, length($text)) . $text . ($rest // ''));
}

sub signature {
	my ($hash, $digest) = @_;
	return "\x42" x 256 if $mode eq 'wrong';
	return "\x42" x 5 if $mode eq 'short';
	return "\x42" x 2048 if $mode eq 'long';
	die "fake_agent: hash code $hash not handled\n" if !exists $di{$hash};
	my $dir = tempdir(CLEANUP => 1);
	open(my $f, '>', "$dir/di") or die;
	print $f pack('H*', $di{$hash}) . $digest;
	close($f);
	system('openssl', 'pkeyutl', '-sign', '-inkey', $key, '-in', "$dir/di",
	       '-out', "$dir/sig") == 0 or die "fake_agent: openssl pkeyutl failed\n";
	open($f, '<', "$dir/sig") or die;
	local $/;
	my $sig = <$f>;
	close($f);
	return $sig;
}

sub serve {
	my ($c) = @_;
	for (;;) {
		my $hdr = read_n($c, 4);
		return if !defined $hdr;
		my $len = unpack('N', $hdr);
		die "fake_agent: frame length $len\n" if $len < 1 || $len > 65552;
		my $body = read_n($c, $len);
		return if !defined $body;
		my $type = ord($body);
		print "REQ $type\n";
		next if $mode eq 'silent';
		if ($mode eq 'refuse') {
			reply($c, 0xff, 3, "not the agent's user");
			return;
		}
		if ($type == 1) {
			reply($c, 0x81, 0, '', pack('CCnn', 1, 1, 1, length($name)) . $name);
		} elsif ($type == 2) {
			reply($c, 0x82, $mode eq 'mismatch' ? 1 : 0, '');
		} elsif ($type == 3) {
			my ($hash, $dlen) = unpack('CC', substr($body, 1, 2));
			my $sig = signature($hash, substr($body, 3, $dlen));
			reply($c, 0x83, 0, '', pack('n', length($sig)) . $sig);
		} elsif ($type == 4) {
			reply($c, 0x84, 0, '');
			exit 0;
		} else {
			reply($c, 0xff, 3, 'unknown request');
			return;
		}
	}
}

for (;;) {
	my $c = $l->accept() or next;
	serve($c);
	close($c);
}
