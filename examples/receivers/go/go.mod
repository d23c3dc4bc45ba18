module hookproof.example/stripereceiver

go 1.19
