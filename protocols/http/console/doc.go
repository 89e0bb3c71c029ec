// Package console is Wharf's web console: the pages an operator of
// ActiveMQ Classic uses at http://host:8161/admin/, served by the broker
// itself, rendered on the server with html/template (every value escaped)
// from templates and a stylesheet and script embedded in the binary.
//
// The pages keep ActiveMQ's paths (index.jsp, queues.jsp, topics.jsp,
// browse.jsp?JMSDestination=, message.jsp, send.jsp, connections.jsp,
// subscribers.jsp, scheduled.jsp, network.jsp: the network connectors,
// their bridges up and down, their counters and demand) so that
// bookmarks carry over; the XML feeds under /admin/xml/ are the web
// server's, not the console's.
// The lists are paginated, sortable and filtered on the server, so that a
// broker with 10,000 queues renders a page as fast as one with ten.
//
// Reading needs a login that may read; browsing messages (their bodies
// are the users' data) and every change need the admin role, as the
// Jolokia API's operations do. Changes are POSTs to *.action paths
// (ActiveMQ's names) carrying a CSRF token (an HMAC of the login under a
// per-process key) in each form, refused too when the browser says the
// request came from another site's page (Sec-Fetch-Site, Origin); each
// answers with a redirect to the page it came from and a one-time notice.
package console
